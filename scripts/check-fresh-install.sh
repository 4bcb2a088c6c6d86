#!/usr/bin/env bash
# Proves the install scripts on a clean Debian 12 root instead of on a machine that already has
# everything: builds a minimal bookworm tree of the host's own architecture with mmdebstrap,
# puts the known trap in it (qemu-utils 10.x from bookworm-backports, the source then removed
# again, as on a machine image seen in the wild: bookworm's qemu-system-arm breaks it and apt
# removes it), installs Rust with rustup (minimal profile: what the README asks for), then in a
# chroot runs scripts/deps.sh, image/scripts/host-deps.sh --no-binfmt and scripts/mysql-root.sh
# (Oracle MySQL in a sid root of its own, built inside the tree), checks that every tool
# they promise works (small real runs: mkfs on files, a genimage image read back with mtools and
# debugfs, a C and a Rust aarch64 binary run under qemu-user, qemu-img on a qcow2 file), hides
# a tool to see each script fail naming its package, runs both scripts again (they must print
# nothing), and removes the tree.
#
# Usage: scripts/check-fresh-install.sh [--keep] [--no-backports-trap] [--workdir DIR]
#   --keep               leave the tree (unmounted) in the work directory for inspection
#   --no-backports-trap  skip the qemu-utils-from-backports step
#   --workdir DIR        where the tree goes (default /var/tmp/spindle-fresh-install; 4 GB)
# Needs root and network access to deb.debian.org and static.rust-lang.org; about 5 minutes.
# binfmt_misc belongs to the host kernel, so host-deps.sh runs with --no-binfmt here; when the
# host has qemu-aarch64 enabled, `arch-test arm64` (mmdebstrap's check) is run in the chroot too.
# Logs and timings: ci-artifacts/fresh-install/.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=deps-common.sh
. "$REPO_DIR/scripts/deps-common.sh"

SUITE=bookworm
MIRROR=http://deb.debian.org/debian
SECURITY_MIRROR=http://deb.debian.org/debian-security
WORKDIR=/var/tmp/spindle-fresh-install
ARTIFACTS=$REPO_DIR/ci-artifacts/fresh-install
KEEP=0
TRAP=1
ROOT=
CHROOT_PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

log() { printf '[fresh-install %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

parse_args() {
	while (($#)); do
		case $1 in
		--keep) KEEP=1 ;;
		--no-backports-trap) TRAP=0 ;;
		--workdir) WORKDIR=$2; shift ;;
		*) die "unknown argument $1 (see the header of $0)" ;;
		esac
		shift
	done
	WORKDIR=$(realpath -m "$WORKDIR")
	ROOT=$WORKDIR/root
}

# step NAME COMMAND...: runs it with its output in ci-artifacts/fresh-install/NAME.log and its
# duration in timings.txt; on failure the log's end is shown.
step() {
	local name=$1 start=$SECONDS rc=0
	shift
	log "step $name"
	"$@" >"$ARTIFACTS/$name.log" 2>&1 || rc=$?
	echo "$name rc=$rc seconds=$((SECONDS - start))" >>"$ARTIFACTS/timings.txt"
	if ((rc != 0)); then
		tail -n 40 "$ARTIFACTS/$name.log" >&2
		die "step $name failed (rc=$rc); log: $ARTIFACTS/$name.log"
	fi
}

# in_chroot: runs the bash script on stdin inside the tree, in a clean environment.
in_chroot() {
	chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb LC_ALL=C.UTF-8 PATH="$CHROOT_PATH" \
		MIRROR="$MIRROR" SUITE="$SUITE" bash -euo pipefail -s
}

mounted_under() { findmnt -rn -o TARGET | grep -E "^$1(/|$)" || true; }

# Processes this check started inside the tree (a daemon a postinst started despite
# policy-rc.d): found by their root directory, ended by their id.
stop_chroot_processes() {
	local link pid
	for link in /proc/[0-9]*/root; do
		[[ $(readlink "$link" 2>/dev/null) == "$ROOT" ]] || continue
		pid=${link#/proc/}
		pid=${pid%/root}
		log "ending process $pid left in the tree: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
		kill "$pid" 2>/dev/null || true
	done
}

unmount_tree() {
	[[ -n $ROOT && -d $ROOT ]] || return 0
	stop_chroot_processes
	local m
	for m in src dev/pts dev sys proc; do
		if mountpoint -q "$ROOT/$m"; then umount "$ROOT/$m" || umount -l "$ROOT/$m"; fi
	done
}

remove_tree() {
	[[ -e $ROOT ]] || return 0
	[[ -z $(mounted_under "$ROOT") ]] || die "mounts remain under $ROOT; not removing it: $(mounted_under "$ROOT")"
	rm -rf --one-file-system "$ROOT"
}

cleanup() {
	local rc=$?
	unmount_tree
	if ((KEEP)); then
		log "tree kept (unmounted) at $ROOT"
	else
		remove_tree
	fi
	exit "$rc"
}

ensure_host_mmdebstrap() {
	found mmdebstrap && return 0
	apt_install fresh-install mmdebstrap
	check_requirements fresh-install "mmdebstrap mmdebstrap"
}

# The clean root: minbase (Essential + Priority required), plus what rustup's installer needs.
build_tree() {
	mmdebstrap --variant=minbase --include=ca-certificates,curl "$SUITE" "$ROOT" \
		"deb $MIRROR $SUITE main" \
		"deb $MIRROR $SUITE-updates main" \
		"deb $SECURITY_MIRROR $SUITE-security main"
}

mount_tree() {
	mount -t proc proc "$ROOT/proc"
	mount -t sysfs -o ro sysfs "$ROOT/sys"
	mount --bind /dev "$ROOT/dev"
	mount --bind /dev/pts "$ROOT/dev/pts"
	mkdir -p "$ROOT/src"
	mount --bind "$REPO_DIR" "$ROOT/src"
	mount -o remount,bind,ro "$ROOT/src"
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
	# The site's own CA certificates, as on the host (a network whose HTTPS goes through an
	# intercepting proxy needs them for rustup's downloads); Debian's way: update-ca-certificates.
	if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
		cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
		chroot "$ROOT" update-ca-certificates >/dev/null 2>&1 ||
			die "update-ca-certificates failed in the tree"
	fi
	# As in an image build: package scripts do not start services (no init runs in a chroot).
	printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
	chmod 755 "$ROOT/usr/sbin/policy-rc.d"
}

# The machine image's state: qemu-utils from bookworm-backports (without its recommended
# qemu-block-extra; with it, apt refuses instead of removing), and no backports source any more.
# Shows that bookworm's qemu-system-arm would remove it (the trap host-deps must avoid).
preinstall_backports_qemu_utils() {
	in_chroot <<-'SH'
		echo "deb $MIRROR $SUITE-backports main" >/etc/apt/sources.list.d/backports.list
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			-t "$SUITE-backports" qemu-utils
		rm /etc/apt/sources.list.d/backports.list
		apt-get update -qq
		qemu-img --version
		dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' 'qemu*' | grep '^ii' || true
		echo "--- what installing qemu-system-arm alone would do now:"
		sim=$(apt-get -s install --no-install-recommends qemu-system-arm 2>&1 || true)
		grep -E '^(Remv|Inst) qemu|^E:' <<<"$sim" || true
		grep '^Remv qemu-utils' <<<"$sim" >/dev/null ||
			{ echo "the trap does not reproduce: qemu-system-arm would not remove qemu-utils"; exit 1; }
	SH
}

install_rust() {
	in_chroot <<-'SH'
		curl --proto '=https' --tlsv1.2 -sSf -o /tmp/rustup-init \
			"https://static.rust-lang.org/rustup/dist/$(uname -m)-unknown-linux-gnu/rustup-init"
		chmod 755 /tmp/rustup-init
		/tmp/rustup-init -y -q --profile minimal --default-toolchain stable --no-modify-path
		rm /tmp/rustup-init
		cargo --version
		rustup component list --installed
	SH
}

run_deps() { in_chroot <<<'bash /src/scripts/deps.sh'; }
run_host_deps() { in_chroot <<<'bash /src/image/scripts/host-deps.sh --no-binfmt'; }

# scripts/mysql-root.sh's promise: Oracle MySQL from a root of Debian sid's own, built with the
# mmdebstrap it installs, runnable from this Debian 12 root; a second run only prints the path.
run_mysql_root() {
	in_chroot <<-'SH'
		p=$(bash /src/scripts/mysql-root.sh)
		"$p" --version | grep ' Ver [0-9]'
		again=$(bash /src/scripts/mysql-root.sh 2>&1)
		[ "$again" = "$p" ] || { echo "second run printed: $again"; exit 1; }
	SH
}

# scripts/deps.sh's promise: the tools the tests, quick.sh and benches/ call.
probe_test_tools() {
	in_chroot <<-'SH'
		cd "$(mktemp -d)"
		sysbench --version
		fio --version
		mariadbd --version
		mariadb --version
		test -x "$(command -v mariadb-install-db)"
		/usr/bin/time -f "time: %e s" true
		truncate -s 320M fs.img
		mkfs.ext4 -q -F fs.img && e2label fs.img x && echo "ext4 ok"
		mkfs.xfs -q -f fs.img && echo "xfs ok"
		mkfs.btrfs -q -f fs.img >/dev/null && echo "btrfs ok"
		mkfs.vfat fs.img >/dev/null && fatlabel fs.img X && echo "vfat ok"
		parted -s fs.img mklabel gpt mkpart p ext4 1MiB 100%
		sfdisk -l fs.img | grep "fs.img1" >/dev/null && echo "parted + sfdisk ok"
		partx --show fs.img
		wipefs -n fs.img >/dev/null
		for t in losetup mount umount blockdev runuser partprobe sha256sum; do command -v "$t"; done
		cargo fmt --version
		cargo clippy --version
	SH
}

# image/scripts/host-deps.sh's promise: the tools the image build, cross-smoke and e2e call.
probe_image_tools() {
	in_chroot <<-'SH'
		cd "$(mktemp -d)"
		v=$(dpkg-query -W -f='${Version}' qemu-system-arm)
		for p in qemu-system-common qemu-utils qemu-user qemu-user-binfmt qemu-user-static; do
			[[ $(dpkg-query -W -f='${Version}' "$p") == "$v" ]] ||
				{ echo "$p is not at $v: $(dpkg-query -W -f='${Version}' "$p")"; exit 1; }
		done
		echo "QEMU packages at $v"
		qemu-img create -q -f qcow2 disk.qcow2 64M
		qemu-img info disk.qcow2 | grep "file format: qcow2" >/dev/null
		qemu-img --version | head -n1
		qemu-system-aarch64 -M help | grep "^virt " >/dev/null
		qemu-system-aarch64 -M help | grep "^raspi4b " >/dev/null
		# The raspi4b DTB edits of e2e.sh on a small tree.
		printf '/dts-v1/;\n/ { soc { n@7ef00100 { status = "okay"; }; mmc@7e300000 { mmc-pwrseq = <1>; }; }; };\n' >t.dts
		dtc -q -I dts -O dtb -o t.dtb t.dts
		fdtput -t s t.dtb /soc/n@7ef00100 status disabled && fdtput -d t.dtb /soc/mmc@7e300000 mmc-pwrseq
		[[ $(fdtget t.dtb /soc/n@7ef00100 status) == disabled ]] && ! fdtget t.dtb /soc/mmc@7e300000 mmc-pwrseq 2>/dev/null
		qemu-system-aarch64 -device help | grep '"usb-uas"' >/dev/null
		qemu-system-aarch64 --version | head -n1
		mmdebstrap --version
		command -v arch-test
		grep -q ':/usr/libexec/qemu-binfmt/aarch64-binfmt-P:' /usr/lib/binfmt.d/qemu-aarch64.conf
		test -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P
		# genimage with the tools it drives (mkdosfs, mcopy, mke2fs), read back as e2e.sh does.
		mkdir -p rootfs/boot/firmware input out
		echo probe >rootfs/boot/firmware/config.txt
		echo probe >rootfs/etc-file
		cat >genimage.cfg <<'CFG'
		image boot.vfat {
			vfat { label = "RASPIFIRM" extraargs = "-F 32" }
			size = 64M
			mountpoint = "/boot/firmware"
		}
		image root.ext4 {
			ext4 { label = "RASPIROOT" use-mke2fs = true }
			size = 16M
			mountpoint = "/"
		}
		image probe.img {
			hdimage { partition-table-type = "mbr" }
			partition boot { partition-type = 0xC offset = 4M image = "boot.vfat" }
			partition root { partition-type = 0x83 image = "root.ext4" }
		}
		CFG
		genimage --config genimage.cfg --rootpath rootfs --tmppath "$PWD/gtmp" --inputpath input \
			--outputpath out >/dev/null
		MTOOLS_SKIP_CHECK=1 mdir -b -i out/probe.img@@4M ::/ | grep config.txt >/dev/null
		debugfs -R "ls -l /" out/root.ext4 2>/dev/null | grep etc-file >/dev/null
		parted -s out/probe.img print | grep fat32 >/dev/null
		echo "genimage, mtools, debugfs, parted ok"
		xz -T0 -k out/probe.img && test -s out/probe.img.xz && echo "xz ok"
		truncate -s 64M ex.img && mkfs.exfat ex.img >/dev/null && echo "exfat ok"
		python3 -c 'import json, struct; print("python3 ok")'
		# The cross toolchain: C, and Rust with the repository's .cargo/config.toml, run under qemu-user.
		printf '#include <stdio.h>\nint main(void){puts("hello from aarch64 C");return 0;}\n' >h.c
		aarch64-linux-gnu-gcc -static -o h h.c
		qemu-aarch64 ./h
		cargo new -q --vcs none hello
		mkdir -p hello/.cargo
		cp /src/.cargo/config.toml hello/.cargo/
		(cd hello && cargo build -q --release --target aarch64-unknown-linux-musl &&
			cargo build -q --release --target aarch64-unknown-linux-gnu)
		file -b hello/target/aarch64-unknown-linux-musl/release/hello | grep "ARM aarch64" | grep "statically linked"
		qemu-aarch64 hello/target/aarch64-unknown-linux-musl/release/hello
		qemu-aarch64 -L /usr/aarch64-linux-gnu hello/target/aarch64-unknown-linux-gnu/release/hello
		# mmdebstrap's foreign-architecture check, through the host kernel's binfmt_misc entry.
		if [[ $(cat /host-binfmt-aarch64) == enabled ]]; then
			arch-test arm64
		else
			echo "host binfmt qemu-aarch64 not enabled: arch-test arm64 not run"
		fi
	SH
}

# The check after installing fires: with a tool gone although dpkg still lists its package
# (apt-get has nothing to do), each script fails naming the tool and the package.
recheck_names_package() {
	in_chroot <<-'SH'
		expect_failure() { # TOOL PACKAGE SCRIPT...
			local tool=$1 pkg=$2 path out rc=0
			shift 2
			path=$(command -v "$tool")
			mv "$path" "$path.hidden"
			out=$("$@" 2>&1) || rc=$?
			mv "$path.hidden" "$path"
			echo "$out" | tail -n 3
			((rc != 0)) || { echo "$* passed with $tool missing"; return 1; }
			grep -F "$tool (package $pkg)" <<<"$out" >/dev/null ||
				{ echo "$* did not name $tool (package $pkg)"; return 1; }
			echo "ok: $* fails naming $tool (package $pkg)"
		}
		expect_failure sysbench sysbench bash /src/scripts/deps.sh
		expect_failure qemu-img qemu-utils bash /src/image/scripts/host-deps.sh --no-binfmt
		expect_failure arch-test arch-test bash /src/image/scripts/host-deps.sh --no-binfmt
	SH
}

# Both scripts a second time: nothing to do, so nothing printed.
rerun_quiet() {
	local out
	out=$(in_chroot <<<'bash /src/scripts/deps.sh && bash /src/image/scripts/host-deps.sh --no-binfmt' 2>&1) ||
		{ echo "second run failed:"; echo "$out"; return 1; }
	[[ -z $out ]] || { echo "second run printed:"; echo "$out"; return 1; }
	echo "second run: no output"
}

# The tree grows to about 4 GB, and apt's downloads more while it installs; a disk that fills
# halfway shows up as dpkg's "No space left on device" in the middle of some package (CI once
# lost a run that way). Say so before starting, naming the directory and the way out.
NEED_MB=6000
check_free_space() {
	local free_mb
	free_mb=$(df -Pm "$WORKDIR" | awk 'NR == 2 { print $4 }')
	log "free space at $WORKDIR: $free_mb MB (the check needs $NEED_MB MB)"
	((free_mb >= NEED_MB)) ||
		die "only $free_mb MB free at $WORKDIR, the check needs $NEED_MB MB: free space there or pass --workdir DIR on a disk with room"
}

main() {
	parse_args "$@"
	((EUID == 0)) || die "run as root (mmdebstrap, chroot, mounts)"
	mkdir -p "$ARTIFACTS" "$WORKDIR"
	: >"$ARTIFACTS/timings.txt"
	[[ -z $(mounted_under "$ROOT") ]] || die "mounts remain under $ROOT: $(mounted_under "$ROOT")"
	remove_tree
	check_free_space
	trap cleanup EXIT
	local start=$SECONDS
	ensure_host_mmdebstrap
	step mmdebstrap build_tree
	mount_tree
	# The chroot's proc has no binfmt_misc mounted; tell the probe what the host kernel does.
	head -n1 /proc/sys/fs/binfmt_misc/qemu-aarch64 >"$ROOT/host-binfmt-aarch64" 2>/dev/null || true
	if ((TRAP)); then step backports-qemu-utils preinstall_backports_qemu_utils; fi
	step rustup install_rust
	step deps run_deps
	step host-deps run_host_deps
	step mysql-root run_mysql_root
	step probe-test-tools probe_test_tools
	step probe-image-tools probe_image_tools
	step recheck-names-package recheck_names_package
	step rerun-quiet rerun_quiet
	echo "total rc=0 seconds=$((SECONDS - start))" >>"$ARTIFACTS/timings.txt"
	log "passed; tree size $(du -sh --one-file-system --exclude="$ROOT/src" "$ROOT" | cut -f1); timings:"
	cat "$ARTIFACTS/timings.txt" >&2
}

main "$@"
