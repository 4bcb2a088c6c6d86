#!/usr/bin/env bash
# Runs tests/together.rs (all disks at once, the throttled disk named the outlier) in a Debian 13
# guest whose kernel has only cgroup v2, so the throttle goes through v2's `io.max`: a host whose
# v1 blkio hierarchy is mounted (Debian 12's hybrid layout, as on spindle's CI machines) holds
# the io controller in v1 and can test only `blkio.throttle.*`.
#   bash scripts/cgroup2-guest.sh        builds the test binaries, the guest, boots it, and
#                                        exits 0 when every test of tests/together.rs passed
# The guest is an amd64 trixie root made with mmdebstrap (cached under
# $SPINDLE_GUEST_CACHE, else /var/cache/spindle-guest; the mirror is $SPINDLE_GUEST_MIRROR, else
# deb.debian.org) with the test binary and spindle at their paths in this tree (the test finds
# spindle where cargo built it), booted by qemu-system-x86_64 with TCG on 2 CPUs: nested KVM is
# not relied on (on a VM it may refuse the kernel). The guest's console goes to
# target/cgroup2-guest/console.log. Needs root; installs mmdebstrap and qemu-system-x86 when
# missing. Takes about 5 minutes with the root cached (the tests: 3 to 4.5 min under TCG), 1.5
# more to build the root.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "cgroup2-guest: needs root (mmdebstrap, mkfs)" >&2; exit 1; }

cache=${SPINDLE_GUEST_CACHE:-/var/cache/spindle-guest}
mirror=${SPINDLE_GUEST_MIRROR:-http://deb.debian.org/debian}
work=target/cgroup2-guest

command -v mmdebstrap >/dev/null || apt-get install -y mmdebstrap
if ! command -v qemu-system-x86_64 >/dev/null; then
	# A host with QEMU from bookworm-backports needs the matching qemu-system-x86.
	apt-get install -y qemu-system-x86 || apt-get install -y -t bookworm-backports qemu-system-x86
fi

# The test binary (its path from cargo) and the spindle it runs.
test_bin=$(cargo test --test together --no-run --message-format=json 2>/dev/null |
	sed -n 's/.*"executable":"\([^"]*together-[^"]*\)".*/\1/p' | tail -n1)
[ -x "$test_bin" ] || { echo "cgroup2-guest: cargo built no tests/together.rs binary" >&2; exit 1; }
spindle=$(pwd)/target/debug/spindle
[ -x "$spindle" ] || { echo "cgroup2-guest: $spindle is missing (cargo build)" >&2; exit 1; }

mkdir -p "$cache"
root_tar=$cache/trixie-amd64.tar
if [ ! -s "$root_tar" ]; then
	mmdebstrap --variant=apt --format=tar \
		--include=linux-image-amd64,e2fsprogs,util-linux,mount,parted,kmod,procps,fdisk \
		trixie "$root_tar.partial" "$mirror"
	mv "$root_tar.partial" "$root_tar"
fi

rm -rf "$work" && mkdir -p "$work/root"
tar -C "$work/root" -xf "$root_tar"
install -D "$spindle" "$work/root$spindle"
install -D "$test_bin" "$work/root/together-test"
cat > "$work/root/init-test" <<'EOF'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup
chmod 1777 /tmp
modprobe loop
echo "== kernel $(uname -r); /sys/fs/cgroup: $(stat -fc %T /sys/fs/cgroup), controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
/together-test --test-threads=1 --nocapture
echo "== tests exit $?"
sync
# Power off; init must not exit meanwhile (the kernel would panic and wait).
echo o > /proc/sysrq-trigger
while :; do sleep 1; done
EOF
chmod +x "$work/root/init-test"
mkfs.ext4 -q -F -d "$work/root" "$work/disk.img" 12G
cp "$work"/root/boot/vmlinuz-* "$work/vmlinuz"
cp "$work"/root/boot/initrd.img-* "$work/initrd.img"
rm -rf "$work/root"

timeout 1800 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 3072 -smp 2 \
	-kernel "$work/vmlinuz" -initrd "$work/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 init=/init-test panic=1" \
	-drive "file=$work/disk.img,if=virtio,format=raw" \
	-nographic -no-reboot > "$work/console.log" 2>&1 || true
rm -f "$work/disk.img"
grep -E '^== |^test |test result' "$work/console.log" || true
grep -q 'cgroup2fs, controllers: .*\bio\b' "$work/console.log" ||
	{ echo "cgroup2-guest: the guest had no cgroup v2 io controller ($work/console.log)" >&2; exit 1; }
grep -q '^== tests exit 0' "$work/console.log" ||
	{ echo "cgroup2-guest: tests/together.rs failed in the guest ($work/console.log)" >&2; exit 1; }
echo "cgroup2-guest: tests/together.rs passed with cgroup v2's io.max"
