#!/bin/bash
# Post-build: turns a copy of the cached mmdebstrap tree into the appliance's root tree.
# Usage: post-build.sh ROOTFS STAGING BINARY
# Each step is one named function; main() lists them in order.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ROOTFS=$1
STAGING=$2
BINARY=$3

stage_rootfs() {
	if [[ -e $STAGING ]]; then
		findmnt -rn -o TARGET | grep -q "^$STAGING/" && die "mounts remain under $STAGING"
		rm -rf "$STAGING"
	fi
	cp -a "$ROOTFS" "$STAGING"
}

install_overlay() {
	cp -a "$IMAGE_DIR/rootfs-overlay/." "$STAGING/"
}

install_binary() {
	install -D -m 755 "$BINARY" "$STAGING/usr/local/bin/spindle"
}

# The default configuration comes from the source tree when it has one (config/spindle.toml,
# owned by the appliance code); otherwise the overlay's placeholder stays.
install_default_config() {
	if [[ -f $REPO_DIR/config/spindle.toml ]]; then
		install -D -m 644 "$REPO_DIR/config/spindle.toml" "$STAGING/etc/spindle/spindle.toml"
	fi
	if [[ -d $REPO_DIR/config/profiles ]]; then
		mkdir -p "$STAGING/etc/spindle/profiles"
		cp -a "$REPO_DIR/config/profiles/." "$STAGING/etc/spindle/profiles/"
	fi
}

# Oracle MySQL beside MariaDB. Debian's only MySQL is sid's mysql-server-core, which needs sid's
# libc and libstdc++; the image carries what that server needs at run time, taken from a minimal
# sid root (scripts/mysql-root.sh, cached in /var/cache/spindle-mysql; 5 min under qemu-user the
# first time), under /opt/spindle-mysql, run through the root's own loader. The shipped
# spindle.toml names it in [mysqld.binaries], so a stick's `flavors` can choose it.
MYSQL_DIR=/opt/spindle-mysql
install_mysql() {
	local wrapper line="mysql = \"$MYSQL_DIR/spindle/bin/mysqld\""
	rm -rf "${STAGING:?}$MYSQL_DIR"
	wrapper=$("$REPO_DIR/scripts/mysql-root.sh" --arch "$ARCH" --copy-to "$STAGING$MYSQL_DIR")
	[[ $wrapper == "$STAGING$MYSQL_DIR/spindle/bin/mysqld" ]] ||
		die "scripts/mysql-root.sh --copy-to printed '$wrapper', not $STAGING$MYSQL_DIR/spindle/bin/mysqld"
	sed -i "s|^# $line\$|$line|" "$STAGING/etc/spindle/spindle.toml"
	grep -qxF "$line" "$STAGING/etc/spindle/spindle.toml" ||
		die "config/spindle.toml has no line '# $line' under [mysqld.binaries] to turn on"
}

# Board files: config.txt names the kernel and initrd raspi-firmware copied to /boot/firmware.
install_board_files() {
	local fw=$STAGING/boot/firmware kernel initrd
	kernel=$(find "$fw" -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sort -V | tail -n1)
	initrd=$(find "$fw" -maxdepth 1 -name 'initrd.img-*' -printf '%f\n' | sort -V | tail -n1)
	[[ -n $kernel && -n $initrd ]] || die "no kernel/initrd in /boot/firmware (raspi-firmware hook did not run?)"
	cmp -s "$fw/$initrd" "$STAGING/boot/$initrd" || die "/boot/firmware/$initrd differs from /boot/$initrd"
	local dtb
	for dtb in $BOARD_DTBS; do
		[[ -f $fw/$dtb ]] || die "no $dtb in /boot/firmware: the kernel package does not ship it (a board of this card would not boot)"
	done
	sed -e "s/@KERNEL@/$kernel/" -e "s/@INITRD@/$initrd/" "$BOARD_DIR/config.txt" >"$fw/config.txt"
	install -m 644 "$BOARD_DIR/cmdline.txt" "$fw/cmdline.txt"
	# Keep raspi-firmware's hook from rewriting our cmdline.txt on a kernel update.
	printf 'ROOTPART=LABEL=RASPIROOT\nCONSOLES="tty0 ttyAMA10,115200 ttyS1,115200"\n' >"$STAGING/etc/default/raspi-firmware"
}

# Every driver on each board's root path (its SD card, USB storage) is built in or in the initrd,
# walked from the boards' device trees (scripts/check-boot-drivers.py): a module the initramfs
# lacks fails the build here, naming the board, the node and the fix, instead of a card that
# never finds its root on that board. Its table goes to the build log.
check_boot_drivers() {
	python3 "$IMAGE_DIR/scripts/check-boot-drivers.py" "$STAGING" >&2 ||
		die "a board's root path needs a driver the initrd lacks (above)"
}

# Read-only root; volatile logs and temp; run data on its own journaled partition.
configure_fstab() {
	cat >"$STAGING/etc/fstab" <<-'FSTAB'
	# <file system>     <mount point>     <type> <options>                                  <dump> <pass>
	LABEL=RASPIROOT     /                 ext4   ro,noatime,errors=remount-ro               0      1
	LABEL=RASPIFIRM     /boot/firmware    vfat   ro,noatime,umask=0022,nofail               0      2
	LABEL=SPINDLEDATA   /var/lib/spindle  ext4   rw,noatime,nodev,nosuid,errors=remount-ro  0      2
	tmpfs               /tmp              tmpfs  rw,nosuid,nodev,mode=1777,size=256M        0      0
	tmpfs               /var/tmp          tmpfs  rw,nosuid,nodev,mode=1777,size=64M         0      0
	tmpfs               /var/log          tmpfs  rw,nosuid,nodev,mode=0755,size=64M         0      0
	FSTAB
	mkdir -p "$STAGING/var/lib/spindle"
}

set_hostname() {
	echo "$HOSTNAME" >"$STAGING/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
		"$HOSTNAME" >"$STAGING/etc/hosts"
}

# No password works anywhere: root is locked (console login included); there is no network
# login service in the image at all.
lock_root() {
	sed -i -E 's/^root:[^:]*:/root:*:/' "$STAGING/etc/shadow"
}

# A read-only root cannot commit a machine id: an empty file makes systemd use a transient one
# (and does not count as "first boot", so no preset-all on the appliance).
prepare_read_only_root() {
	: >"$STAGING/etc/machine-id"
	rm -f "$STAGING/var/lib/dbus/machine-id"
}

enable_unit() {
	local unit=$1 target=${2:-multi-user.target}
	mkdir -p "$STAGING/etc/systemd/system/$target.wants"
	ln -sf "/etc/systemd/system/$unit" "$STAGING/etc/systemd/system/$target.wants/$unit"
}

enable_services() {
	enable_unit spindle.service
	enable_unit spindle-growdata.service
	# Test only; each runs only with spindle.e2e=smoke|full on the kernel command line.
	enable_unit spindle-e2e-smoke.service
	enable_unit spindle-e2e-full.service
	enable_unit spindle-e2e-pi4.service
}

# Nothing listens on a network: mask whatever network service a dependency may have brought.
disable_network_services() {
	local unit
	for unit in systemd-networkd.service systemd-networkd.socket systemd-networkd-wait-online.service \
		systemd-resolved.service systemd-timesyncd.service ssh.service ssh.socket networking.service; do
		ln -sf /dev/null "$STAGING/etc/systemd/system/$unit"
	done
}

# Periodic jobs would disturb a benchmark (fstrim -A trims the disks under test, smartd polls
# their SMART) or need a network and a writable root (apt-daily): none of them runs on the
# appliance. spindle runs smartctl itself, before and after each target.
disable_periodic_jobs() {
	local unit
	for unit in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
		fstrim.timer smartmontools.service smartd.service; do
		ln -sf /dev/null "$STAGING/etc/systemd/system/$unit"
	done
}

# MariaDB ships no datadir in the image: spindle creates one per disk under test.
remove_mariadb_datadir() {
	[[ ! -L $STAGING/etc/systemd/system/multi-user.target.wants/mariadb.service ]] ||
		die "mariadb.service is enabled in the rootfs"
	find "$STAGING/var/lib/mysql" -mindepth 1 -delete
}

remove_build_leftovers() {
	rm -rf "$STAGING"/var/cache/apt/archives/*.deb "$STAGING"/var/lib/apt/lists/*_Packages* "$STAGING"/var/log/*
	rm -f "$STAGING/usr/sbin/policy-rc.d"
}

# The under-voltage sensor's driver, built for this kernel with the cached rootfs
# (scripts/build-hwmon-module.sh), and loaded at boot (rootfs-overlay/etc/modules-load.d).
check_hwmon_module() {
	local ko
	ko=$(find "$STAGING/lib/modules" -path '*/updates/raspberrypi-hwmon.ko')
	[[ -n $ko ]] || die "no raspberrypi-hwmon.ko under /lib/modules/*/updates (rootfs built without scripts/build-hwmon-module.sh?)"
	grep -qx raspberrypi-hwmon "$STAGING/etc/modules-load.d/spindle-sensors.conf" ||
		die "raspberrypi-hwmon is not loaded at boot (etc/modules-load.d/spindle-sensors.conf)"
}

record_manifest() {
	mkdir -p "$OUT_DIR"
	{
		dpkg-query --admindir="$STAGING/var/lib/dpkg" -W -f='${Package}\t${Version}\n'
		printf 'mysql-server-core (Debian sid, %s)\t%s\n' "$MYSQL_DIR" "$(cat "$STAGING$MYSQL_DIR/spindle/version")"
	} >"$OUT_DIR/$IMAGE_NAME.packages"
}

main() {
	[[ -d $ROOTFS && -f $BINARY ]] || die "usage: post-build.sh ROOTFS STAGING BINARY"
	stage_rootfs
	install_overlay
	install_binary
	install_default_config
	install_mysql
	install_board_files
	check_boot_drivers
	configure_fstab
	set_hostname
	lock_root
	prepare_read_only_root
	enable_services
	disable_network_services
	disable_periodic_jobs
	remove_mariadb_datadir
	remove_build_leftovers
	check_hwmon_module
	record_manifest
	log "post-build: staged $STAGING"
}

main "$@"
