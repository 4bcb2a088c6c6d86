#!/bin/bash
# Emulated end-to-end test of the SD-card image: boots image/out/spindle-rpi-arm64.img under
# qemu-system-aarch64 -M virt with USB disks on qemu-xhci/usb-ehci, waits (bounded) for the
# guest to power off, then checks the results on the host without mounting anything.
#
# Usage: e2e.sh [--smoke|--full|--pi4|--auto] [--image IMG] [--timeout SECONDS]
#   --smoke  boot-path check (kernel cmdline spindle.e2e=smoke): the test unit in the image
#            lists the disks, provisions a MariaDB datadir on one blank disk, powers off.
#   --full   the appliance, booted four times from the same SD card, disks and stick, with its
#            LEDs and button on the virt board's PL061 GPIO controller (the guest's spindle.toml:
#            rootfs-overlay/usr/local/share/spindle/e2e/virt-gpio.toml). The host presses the
#            button (QEMU's gpio-key on line 3, through the monitor's system_powerdown) and reads
#            the LED lines 0-2 from PL061's data register 40 times a second (test/leds.py); each
#            boot's LED stretches are checked against the daemon's status lines and the README's
#            pattern table. The guest powers off once the results are on the stick:
#              1 first       profile quick with flavors = ["mariadb", "mysql"] (the stick's
#                            spindle.toml), started by a button press once the LEDs say ready:
#                            one complete bundle, fileio for both blank disks and OLTP and TpmC
#                            on each server (MariaDB, and the image's Oracle MySQL), shown per
#                            server in summary.txt, results.csv and report.html, the data disk
#                            and the USB2 disk skipped with reasons; LEDs ready,
#                            running (fileio, OLTP, TPC-C), copying, safe to remove with red
#                            figures (quick reads cached fileio sets: every result carries a
#                            validity verdict, those reads red for the page cache);
#              2 powercut    profile check (stick edited), started by a press: QEMU killed during
#                            the first fileio runs, as a power cut;
#              3 after-cut   the same disks again: spindle reuses the disks it formatted itself,
#                            the cut run's bundle is marked interrupted (both targets listed, the
#                            phase that ran marked interrupted), a second run is started by a
#                            press and BLANK2 is unplugged (device_del) once its OLTP phase has
#                            begun: BLANK1 complete, BLANK2's phase failed as disconnected; the
#                            LEDs end on "safe to remove, some tests failed" and keep it until
#                            the daemon stops; the first bundle is byte-for-byte untouched;
#              4 no-targets  only the data disk and the USB2 disk, autostart from the stick: a
#                            no_targets bundle naming both and why, the LEDs on "no disks"
#                            before and after, and the guest still finishes.
#   --pi4    the image's own kernel, initrd and bcm2711-rpi-4-b.dtb on QEMU's emulated Raspberry
#            Pi 4 (-M raspi4b, QEMU 9 or later), the DTB changed only where QEMU lacks the
#            hardware (see image/README.md): systemd and the daemon come up from the SD card,
#            the daemon drives its LEDs on the Pi's own GPIO controller (pinctrl-bcm2711, lines
#            17/27/22), which the host reads in GPLEV0 — with no USB3 on raspi4b (no PCIe, no
#            VL805) they must say "no disks" — and the raspberrypi-hwmon module built for the
#            image's kernel is there, loads and binds (QEMU 10's firmware answers the
#            get-throttled query, so rpi_volt appears and the daemon reads under-voltage from
#            it; QEMU disables the thermal node, so the temperature is "not measured" with why).
#            QEMU's bcm2838 GPIO has no edge detection, so the button is tested on virt only.
#   --auto   (default) --full when the binary in the image has `spindle daemon` (every image
#            built from main since the daemon landed), else --smoke: for images built from older
#            trees. CI (image/ci.sh) runs --full, so a binary without a working daemon fails.
# Artifacts (console log, stick contents, summary) go to ci-artifacts/e2e-<mode>/.
set -euo pipefail

IMAGE_DIR=$(cd "$(dirname "$0")/.." && pwd)
REPO_DIR=$(cd "$IMAGE_DIR/.." && pwd)
MODE=auto
IMAGE=$IMAGE_DIR/out/spindle-rpi-arm64.img
TIMEOUT=
WORK=$IMAGE_DIR/build/e2e
BOOT_OFFSET=$((4 * 1024 * 1024))   # partition 1 of board/rpi-arm64/genimage.cfg
export MTOOLS_SKIP_CHECK=1

# Serial numbers the guest sees (USB serial; for usb-uas, the bridge's serial).
SERIAL_BLANK_BOT=BLANK1     # blank, USB3, usb-storage (bulk-only)
SERIAL_BLANK_UAS=BLANK2     # blank, USB3, uas + scsi-hd
SERIAL_DATADISK=DATADISK    # USB3, holds an ext4 filesystem with files: must not be touched
SERIAL_USB2=USB2DISK        # blank, USB2 link (usb-ehci): skipped for its link speed
SERIAL_STICK=STICK          # FAT, label SPINDLE: configuration in, results out

LEDS=$IMAGE_DIR/test/leds.py
# Where the host reads the LED lines: virt's PL061 at 0x09030000, its data register with every
# line unmasked (LEDs on lines 0-2); on raspi4b the BCM2711's GPLEV0 (LEDs on BCM 17/27/22, the
# shipped spindle.toml's pins).
LED_REGISTER=0x090303fc
LED_PINS=green=0,yellow=1,red=2
PI4_LED_REGISTER=0xfe200034
PI4_LED_PINS=green=17,yellow=27,red=22
GUEST_CONFIG=/usr/local/share/spindle/e2e/virt-gpio.toml
READY_HOLD_S=7              # the LEDs are read this long in a state before the button is pressed

log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
failures=0
check() {
	local what=$1
	shift
	if "$@"; then log "ok: $what"; else log "FAIL: $what"; failures=$((failures + 1)); fi
}

parse_args() {
	while (($#)); do
		case $1 in
		--smoke) MODE=smoke ;;
		--full) MODE=full ;;
		--pi4) MODE=pi4 ;;
		--auto) MODE=auto ;;
		--image) IMAGE=$2; shift ;;
		--timeout) TIMEOUT=$2; shift ;;
		*) die "unknown argument $1 (see the header of $0)" ;;
		esac
		shift
	done
}

require_host_tools() {
	local tool
	for tool in qemu-system-aarch64 qemu-img mcopy mdir mkfs.vfat mke2fs debugfs sha256sum python3; do
		command -v "$tool" >/dev/null || die "$tool missing (run image/scripts/host-deps.sh)"
	done
	[[ -f $IMAGE ]] || die "no image at $IMAGE (run make -C image)"
}

# Kernel and initrd come from the image's own boot partition, as the Pi firmware loads them.
extract_kernel_initrd() {
	local names kernel initrd
	names=$(mdir -b -i "$IMAGE@@$BOOT_OFFSET" ::/)
	kernel=$(grep -o 'vmlinuz-[^ ]*' <<<"$names" | sort -V | tail -n1)
	initrd=$(grep -o 'initrd.img-[^ ]*' <<<"$names" | sort -V | tail -n1)
	[[ -n $kernel && -n $initrd ]] || die "no kernel/initrd in the image's boot partition"
	mcopy -n -o -i "$IMAGE@@$BOOT_OFFSET" "::/$kernel" "$WORK/vmlinuz"
	mcopy -n -o -i "$IMAGE@@$BOOT_OFFSET" "::/$initrd" "$WORK/initrd.img"
	log "kernel $kernel, initrd $initrd"
}

detect_mode() {
	[[ $MODE == auto ]] || return 0
	local bin=$WORK/spindle
	rm -f "$bin"
	debugfs -R "dump -p /usr/local/bin/spindle $bin" "$WORK/root.ext4" >/dev/null 2>&1 || true
	if [[ -s $bin ]] && qemu-aarch64 "$bin" daemon --help >/dev/null 2>&1; then
		MODE=full
	else
		MODE=smoke
	fi
	log "mode: $MODE (auto: the image's spindle $([[ $MODE == full ]] && echo has || echo lacks) 'daemon')"
}

# The root partition as a file, for debugfs (partition 2 starts after the 256M boot partition).
extract_root_partition() {
	local start size
	read -r start size < <(python3 - "$IMAGE" <<-'PY'
	import struct, sys
	mbr = open(sys.argv[1], "rb").read(512)
	e = mbr[446 + 16:446 + 32]
	print(struct.unpack("<I", e[8:12])[0] * 512, struct.unpack("<I", e[12:16])[0] * 512)
	PY
	)
	dd if="$IMAGE" of="$WORK/root.ext4" bs=1M iflag=skip_bytes,count_bytes skip="$start" count="$size" conv=sparse status=none
}

make_blank_disk() { rm -f "$1"; truncate -s "$2" "$1"; }

# After a pass, the disks the guest filled (the suite's data directories on blank1/blank2, the
# SD card's overlay) are several GB nobody reads again: every boot makes them anew. A failed
# run keeps them for inspection; the artifacts hold what the checks read.
free_work_disks() {
	log "freeing the work disks: $(du -sch "$WORK"/*.img "$WORK"/*.qcow2 "$WORK/root.ext4" 2>/dev/null | tail -n1 | cut -f1)"
	rm -f "$WORK"/*.img "$WORK"/*.qcow2 "$WORK/root.ext4"
}

make_data_disk() {
	local tree=$WORK/datadisk-tree
	rm -rf "$tree" "$WORK/datadisk.img"
	mkdir -p "$tree/photos"
	echo "precious data: spindle must not touch this disk" >"$tree/README.txt"
	head -c 1M /dev/urandom >"$tree/photos/holiday.raw"
	truncate -s 1G "$WORK/datadisk.img"
	mke2fs -q -t ext4 -L USERDATA -d "$tree" "$WORK/datadisk.img"
	sha256sum "$WORK/datadisk.img" | cut -d' ' -f1 >"$WORK/datadisk.sha256"
}

make_results_stick() {
	rm -f "$WORK/stick.img"
	truncate -s 256M "$WORK/stick.img"
	mkfs.vfat -F 32 -n SPINDLE "$WORK/stick.img" >/dev/null
	mcopy -i "$WORK/stick.img" "$IMAGE_DIR/test/stick/spindle.toml" ::/spindle.toml
}

make_disks() {
	make_blank_disk "$WORK/blank1.img" 8G
	make_blank_disk "$WORK/blank2.img" 8G
	make_blank_disk "$WORK/usb2.img" 4G
	make_data_disk
	make_results_stick
	# The SD card: a copy-on-write overlay, 1 GiB larger than the image, so the first-boot
	# growth of the data partition is exercised and the image file itself stays untouched.
	local size
	size=$(stat -c %s "$IMAGE")
	rm -f "$WORK/sdcard.qcow2"
	qemu-img create -q -f qcow2 -F raw -b "$IMAGE" "$WORK/sdcard.qcow2" $((size + 1024 * 1024 * 1024))
}

# panic=10: a guest whose kernel panics reboots 10 s later, and -no-reboot turns that into QEMU's
# exit, so a panicked boot costs seconds, not the boot's whole timeout (CI once waited 2400 s
# on a panic in the initramfs before booting again).
kernel_cmdline() {
	local cmdline="console=ttyAMA0 root=LABEL=RASPIROOT ro fsck.repair=yes rootwait net.ifnames=0 panic=10"
	case $MODE in
	smoke) cmdline+=" spindle.e2e=smoke" ;;
	# gpio_keys would hold PL061 line 3 (the button): kept off it in the test boot only.
	full) cmdline+=" spindle.e2e=full spindle.poweroff_after_run=1 modprobe.blacklist=gpio_keys systemd.setenv=SPINDLE_CONFIG=$GUEST_CONFIG" ;;
	esac
	echo "$cmdline"
}

# The Pi 4 device tree as QEMU's raspi4b can boot it: the nodes at 0x7ef0xxxx (the AON
# interrupt controller, whose probe takes a synchronous external abort, its clock, both HDMI
# and their I2C) disabled, and the Arasan SD controller's mmc-pwrseq deleted (its power
# sequence needs firmware GPIO calls QEMU does not answer; QEMU puts the SD card on that
# controller, not on EMMC2). Every change is listed in dtb-changes.txt.
patch_pi4_dtb() {
	local dtb=$WORK/bcm2711-rpi-4-b.dtb node changes=$ARTIFACTS/dtb-changes.txt
	mcopy -n -o -i "$IMAGE@@$BOOT_OFFSET" ::/bcm2711-rpi-4-b.dtb "$dtb" || die "no bcm2711-rpi-4-b.dtb in the image's boot partition"
	: >"$changes"
	for node in $(fdtget -l "$dtb" /soc | grep '@7ef0'); do
		fdtput -t s "$dtb" "/soc/$node" status disabled
		echo "/soc/$node: status = \"disabled\"" >>"$changes"
	done
	fdtput -d "$dtb" /soc/mmc@7e300000 mmc-pwrseq
	echo "/soc/mmc@7e300000: mmc-pwrseq deleted" >>"$changes"
	[[ $(grep -c '@7ef0' "$changes") -ge 1 ]] || die "no /soc/*@7ef0xxxx nodes in the DTB: the raspi4b edits need revisiting"
	PI4_DTB=$dtb
	log "DTB for raspi4b: $(wc -l <"$changes") changes (dtb-changes.txt)"
}

# The raspi4b SD card must be a power of two in size: a copy-on-write overlay of the image,
# rounded up.
make_pi4_sdcard() {
	local size p2=$((1024 * 1024 * 1024))
	size=$(stat -c %s "$IMAGE")
	while ((p2 < size)); do p2=$((p2 * 2)); done
	rm -f "$WORK/sdcard-pi4.qcow2"
	qemu-img create -q -f qcow2 -F raw -b "$IMAGE" "$WORK/sdcard-pi4.qcow2" "$p2"
}

qemu_command_pi4() {
	QEMU_CMD=(qemu-system-aarch64 -M raspi4b -pidfile "$WORK/qemu.pid"
		-display none -serial "file:$CONSOLE.log" -no-reboot
		-chardev "socket,id=mleds,path=$MON_LEDS,server=on,wait=off" -mon chardev=mleds,mode=readline
		-chardev "socket,id=mctl,path=$MON_CTL,server=on,wait=off" -mon chardev=mctl,mode=readline
		-kernel "$WORK/vmlinuz" -initrd "$WORK/initrd.img" -dtb "$PI4_DTB"
		-append "console=ttyAMA0,115200 root=LABEL=RASPIROOT ro fsck.repair=yes rootwait net.ifnames=0 panic=10 spindle.e2e=pi4"
		-drive "if=sd,file=$WORK/sdcard-pi4.qcow2,format=qcow2")
}

# The QEMU command line; without the blank disks when $1 is "no-blanks".
qemu_command() {
	local blanks=(
		-drive if=none,id=d1,file="$WORK/blank1.img",format=raw
		-device usb-storage,bus=xhci.0,drive=d1,serial=$SERIAL_BLANK_BOT
		-device usb-uas,id=uas,bus=xhci.0,serial=$SERIAL_BLANK_UAS
		-drive if=none,id=d2,file="$WORK/blank2.img",format=raw
		-device scsi-hd,bus=uas.0,scsi-id=0,lun=0,drive=d2,vendor=Samsung,product=PortableSSD_T7,serial=$SERIAL_BLANK_UAS
	)
	[[ ${1:-} == no-blanks ]] && blanks=()
	MON_LEDS=$WORK/monitor-leds.sock
	MON_CTL=$WORK/monitor-ctl.sock
	rm -f "$MON_LEDS" "$MON_CTL"
	if [[ $MODE == pi4 ]]; then
		qemu_command_pi4
		return
	fi
	# Two monitors: one the LED sampler keeps busy, one for the button and unplugging.
	rm -f "$WORK/qemu.pid"
	QEMU_CMD=(qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 2048 -pidfile "$WORK/qemu.pid"
		-display none -serial "file:$CONSOLE.log" -nic none -no-reboot
		-chardev "socket,id=mleds,path=$MON_LEDS,server=on,wait=off" -mon chardev=mleds,mode=readline
		-chardev "socket,id=mctl,path=$MON_CTL,server=on,wait=off" -mon chardev=mctl,mode=readline
		-kernel "$WORK/vmlinuz" -initrd "$WORK/initrd.img" -append "$(kernel_cmdline)"
		-drive if=none,id=sd,file="$WORK/sdcard.qcow2",format=qcow2 -device virtio-blk-pci,drive=sd
		-device qemu-xhci,id=xhci,p2=8,p3=8
		"${blanks[@]}"
		-drive if=none,id=d3,file="$WORK/datadisk.img",format=raw
		-device usb-storage,bus=xhci.0,drive=d3,serial=$SERIAL_DATADISK
		-drive if=none,id=st,file="$WORK/stick.img",format=raw
		-device usb-storage,bus=xhci.0,drive=st,removable=on,serial=$SERIAL_STICK
		-device usb-ehci,id=ehci
		-drive if=none,id=d4,file="$WORK/usb2.img",format=raw
		-device usb-storage,bus=ehci.0,drive=d4,serial=$SERIAL_USB2)
}

# A boot that dies in the initramfs, before the real root's systemd starts, is booted again once.
# Seen once in CI (the first boot: klibc run-init "nuking initramfs contents: Directory not
# empty" 0.7 s after the last USB disk attached), not reproduced in 142 boots of the same image
# with the same disks (idle host, and with 2-4 busy CPU loops and disk writes beside it). The
# panicked console is kept as console-BOOT.initramfs-panic.log and summary.txt counts retries.
died_in_initramfs() { console_has 'Kernel panic' && ! console_has '\] systemd\[1\]: systemd [0-9]+ running'; }
retry_initramfs_panic() {
	local boot=$1
	shift
	"$@"
	died_in_initramfs || return 0
	mv "$CONSOLE.log" "$CONSOLE.initramfs-panic.log"
	rm -f "$CONSOLE.txt"
	INITRAMFS_RETRIES=$((INITRAMFS_RETRIES + 1))
	log "boot '$boot' died in the initramfs (kernel panic before systemd started; console kept as $CONSOLE.initramfs-panic.log): booting it again once"
	"$@"
}

run_qemu() { retry_initramfs_panic "$1" run_qemu_once "$@"; }
power_cut() { retry_initramfs_panic "$1" power_cut_once "$@"; }

# start_boot BOOT [no-blanks]: QEMU in the background (bounded by $TIMEOUT) and the LED sampler
# on its monitor; finish_boot waits for both.
start_boot() {
	local boot=$1
	CONSOLE=$ARTIFACTS/console-$boot
	LED_DIR=$ARTIFACTS/leds-$boot
	rm -rf "$LED_DIR"
	qemu_command "${2:-}"
	BOOT_START=$SECONDS
	timeout -k 15 "$TIMEOUT" "${QEMU_CMD[@]}" &
	QEMU_PID=$!
	python3 "$LEDS" sample --monitor "$MON_LEDS" --addr "$LED_REGISTER" --console "$CONSOLE.log" \
		--out "$LED_DIR" 2>"$ARTIFACTS/leds-$boot.sampler.log" &
	SAMPLER_PID=$!
}

finish_boot() {
	local rc=0
	wait "$QEMU_PID" || rc=$?
	wait "$SAMPLER_PID" || log "LED sampler of this boot failed: $(tail -n3 "$ARTIFACTS/leds-${CONSOLE##*console-}.sampler.log")"
	QEMU_SECONDS=$((SECONDS - BOOT_START))
	QEMU_RC=$rc
	clean_console_log
	# A panicked guest reboots (panic=10) and QEMU exits 0: not a power-off of its own.
	if ((rc == 0)) && console_has 'Kernel panic'; then
		QEMU_RC=125
		log "the guest's kernel panicked (QEMU left at its reboot); see $CONSOLE.log"
	fi
	TOTAL_QEMU_SECONDS=$((TOTAL_QEMU_SECONDS + QEMU_SECONDS))
}

qemu_alive() { kill -0 "$QEMU_PID" 2>/dev/null; }

# wait_console PATTERN: until the console shows PATTERN (true) or QEMU ends or the boot's time
# is up (false).
wait_console() {
	while qemu_alive && ((SECONDS - BOOT_START < TIMEOUT)); do
		if [[ -f $CONSOLE.log ]] && clean_console_log && console_has "$1"; then
			return 0
		fi
		sleep 1
	done
	# QEMU may exit within the second after the line was written (a guest that powers off).
	[[ -f $CONSOLE.log ]] && clean_console_log && console_has "$1"
}

monitor() { python3 "$LEDS" send --monitor "$MON_CTL" "$1"; }

# press_when PATTERN: once the console shows PATTERN (a state that takes a press), the LEDs are
# read for READY_HOLD_S, then the button is pressed: QEMU's gpio-key, 100 ms high on line 3.
PRESSES=0
press_when() {
	if ! wait_console "$1"; then
		log "no /$1/ on the console: the button was not pressed"
		return 1
	fi
	sleep "$READY_HOLD_S"
	log "pressing the button (system_powerdown: PL061 line 3 high for 100 ms)"
	monitor system_powerdown && PRESSES=$((PRESSES + 1))
}

# A state in which a short press starts a run: ready, or the stick just filled.
PRESSABLE='\] spindle\[[0-9]+\]: spindle: status: (ready \([1-9]|safe to remove the stick)'

# run_qemu_once BOOT [no-blanks] [DRIVER...]: one boot until the guest powers off; DRIVER (a
# command) acts on the running guest, e.g. presses the button.
run_qemu_once() {
	local boot=$1 blanks=${2:-}
	shift 2 || shift $#
	start_boot "$boot" "$blanks"
	log "boot '$boot' (timeout ${TIMEOUT}s), console: $CONSOLE.log"
	if (($#)); then "$@" || log "boot '$boot': the test's actions on the guest did not all happen"; fi
	finish_boot
	if ((QEMU_RC == 0)); then
		log "guest powered off after ${QEMU_SECONDS}s"
	else
		log "qemu did not power off within ${TIMEOUT}s (rc=$QEMU_RC); see $CONSOLE.log"
	fi
}

# power_cut_once BOOT PATTERN: boots, starts the run with the button, waits (bounded) until the
# console shows PATTERN, lets the run go on for a few seconds, then kills QEMU as a power cut
# would stop the Pi.
power_cut_once() {
	local boot=$1 pattern=$2
	start_boot "$boot"
	log "boot '$boot': power cut once the console shows /$pattern/"
	POWER_CUT=no
	press_when "$PRESSABLE" || true
	if wait_console "$pattern"; then
		sleep 8
		kill -KILL "$(cat "$WORK/qemu.pid")" && POWER_CUT=yes
	fi
	finish_boot
	log "power cut: $POWER_CUT after ${QEMU_SECONDS}s"
}

# The kernel name the guest gave the disk with USB serial $1 (e2e-full-watch lists them).
guest_disk_name() {
	grep -aoE "SPINDLE-E2E: disk dev=sd[a-z]+ serial=$1\$" "$CONSOLE.txt" | head -n1 | sed -E 's/.*dev=(sd[a-z]+) .*/\1/'
}

# The after-cut boot's actions: start the run with a press, then pull BLANK2 (the usb-uas
# device) a few seconds into its OLTP phase.
UNPLUGGED=no
press_then_unplug_blank2() {
	press_when "$PRESSABLE" || return 1
	wait_console "SPINDLE-E2E: disk dev=sd[a-z]+ serial=$SERIAL_BLANK_UAS\$" || return 1
	local name
	name=$(guest_disk_name "$SERIAL_BLANK_UAS")
	log "$SERIAL_BLANK_UAS is $name in the guest; unplugging it once its OLTP phase starts"
	wait_console "\] spindle\[[0-9]+\]: spindle: \[[0-9]+/[0-9]+\] $name: oltp-" || return 1
	sleep 3
	monitor "device_del uas" && UNPLUGGED=$name
	log "unplugged $SERIAL_BLANK_UAS ($name): $UNPLUGGED"
}

# check_leds BOOT [--expect PATTERN ...] [--final PATTERN]: the boot's LED stretches against the
# daemon's status lines and the pattern table (report in leds-BOOT.txt).
check_leds() {
	local boot=$1
	shift
	local report=$ARTIFACTS/leds-$boot.txt
	python3 "$LEDS" check --dir "$ARTIFACTS/leds-$boot" --pins "$LED_PINS" --report "$report" "$@" >/dev/null && return 0
	# CI keeps only its log: the verdicts go there too.
	[[ -f $report ]] && sed 's/^/    leds-'"$boot"': /' "$report" >&2
	return 1
}

# The console log without colour codes and carriage returns, for matching.
clean_console_log() {
	sed -e 's/\x1b\[[0-9;]*[a-zA-Z]//g' -e 's/\r//g' "$CONSOLE.log" >"$CONSOLE.txt"
}

# "SPINDLE-E2E: disk dev=/dev/sdb serial=BLANK1 speed=5000 driver=usb-storage ..." lines.
console_has() { grep -qaE "$1" "$CONSOLE.txt"; }
disk_line_has() { console_has "SPINDLE-E2E: disk .*serial=$1 .*$2"; }

check_smoke() {
	check "spindle --version ran" console_has '^spindle [0-9]'
	check "smoke test step version" console_has 'SPINDLE-E2E: step version rc=0'
	check "no failed systemd units" console_has 'SPINDLE-E2E: failed-units count=0'
	check "root filesystem mounted read-only" console_has 'SPINDLE-E2E: root-mount ro[,$]'
	check "data partition grown to the card" console_has 'spindle-growdata: grew'
	check "BLANK1: USB3, usb-storage, blank" disk_line_has $SERIAL_BLANK_BOT 'speed=5000 driver=usb-storage .*signature=none'
	check "BLANK2: USB3, uas, blank" disk_line_has $SERIAL_BLANK_UAS 'speed=5000 driver=uas .*signature=none'
	check "DATADISK: USB3, has ext4" disk_line_has $SERIAL_DATADISK 'speed=5000 .*signature=ext4'
	check "USB2DISK: USB2 link" disk_line_has $SERIAL_USB2 'speed=480 '
	check "STICK: removable, vfat" disk_line_has $SERIAL_STICK 'removable=1 .*signature=vfat'
	check "spindle disks --json: blank USB3 disks eligible; data, USB2, stick, SD card excluded" check_disks_json
	check "mysqld init on a USB disk" console_has 'SPINDLE-E2E: step mysqld-init rc=0'
	check "mysqld start" console_has 'SPINDLE-E2E: step mysqld-start rc=0'
	check "mysqld stop" console_has 'SPINDLE-E2E: step mysqld-stop rc=0'
	check "smoke test finished without failures" console_has 'SPINDLE-E2E: end .*failures=0'
}

# `spindle disks --json` (schema of src/disk on main): each disk's verdict as the appliance
# will see it.
check_disks_json() {
	sed -n '/SPINDLE-E2E: disks-json-begin/,/SPINDLE-E2E: disks-json-end/p' "$CONSOLE.txt" |
		sed '1d;$d' >"$ARTIFACTS/disks.json"
	python3 - "$ARTIFACTS/disks.json" "$SERIAL_BLANK_BOT" "$SERIAL_BLANK_UAS" "$SERIAL_DATADISK" \
		"$SERIAL_USB2" "$SERIAL_STICK" <<-'PY'
	import json, sys
	disks = json.load(open(sys.argv[1]))
	blank_bot, blank_uas, data, usb2, stick = sys.argv[2:7]
	by_serial = {d.get("serial"): d for d in disks}
	expect = {
	    blank_bot: ("eligible", None, "usb-storage", 5000),
	    blank_uas: ("eligible", None, "uas", 5000),
	    data: ("excluded", "holds_data", "usb-storage", 5000),
	    usb2: ("excluded", "usb2_link", "usb-storage", 480),
	    stick: ("excluded", "results_stick", "usb-storage", 5000),
	}
	problems = []
	for serial, (verdict, reason, driver, speed) in expect.items():
	    d = by_serial.get(serial)
	    if d is None:
	        problems.append(f"{serial}: not listed")
	        continue
	    v, usb = d.get("verdict", {}), d.get("usb") or {}
	    got = (v.get("verdict"), v.get("reason"), usb.get("driver"), usb.get("link_speed"))
	    if got[0] != verdict or (reason and got[1] != reason) or got[2] != driver or got[3] != speed:
	        problems.append(f"{serial}: got {got}, expected {(verdict, reason, driver, speed)}")
	boot = [d for d in disks if d.get("verdict", {}).get("reason") == "boot_device"]
	if not boot:
	    problems.append("the SD card (boot device) is not excluded")
	for p in problems:
	    print("disks.json:", p)
	sys.exit(1 if problems else 0)
	PY
}

# The stick is read with mtools (no mount), into $ARTIFACTS/stick-<boot>/.
copy_stick_contents() {
	STICK_COPY=$ARTIFACTS/stick-$1
	rm -rf "$STICK_COPY"
	mkdir -p "$STICK_COPY"
	mcopy -s -n -i "$WORK/stick.img" '::/*' "$STICK_COPY/" 2>/dev/null || true
	(cd "$STICK_COPY" && find . -type f | sort) >"$STICK_COPY.files.txt"
}

# The stick's spindle.toml with another profile and autostart, and MariaDB alone (the later
# boots run the short `check` one; only the last boot starts by itself).
set_stick_config() {
	sed -e "s/^profile = .*/profile = \"$1\"/" -e "s/^autostart = .*/autostart = $2/" -e '/^flavors = /d' \
		"$IMAGE_DIR/test/stick/spindle.toml" >"$WORK/stick-spindle.toml"
	grep -q "^profile = \"$1\"" "$WORK/stick-spindle.toml" && grep -q "^autostart = $2\$" "$WORK/stick-spindle.toml" ||
		die "could not set profile $1 and autostart $2 in the stick's spindle.toml"
	mcopy -o -i "$WORK/stick.img" "$WORK/stick-spindle.toml" ::/spindle.toml
}

# check_bundles STEP: the run bundles (results.json schema_version 5, written by the
# appliance's sink) under spindle/ on the stick after boot STEP (first, after-cut, no-targets).
check_bundles() {
	python3 - "$1" "$STICK_COPY" "$SERIAL_BLANK_BOT" "$SERIAL_BLANK_UAS" "$SERIAL_DATADISK" "$SERIAL_USB2" <<-'PY'
	import json, pathlib, sys
	step, root = sys.argv[1], pathlib.Path(sys.argv[2])
	blank1, blank2, data, usb2 = sys.argv[3:7]
	problems = []
	runs = {p.parent.name: json.loads(p.read_text()) for p in sorted(root.glob("spindle/*/results.json"))}
	expected_runs = {"first": 1, "after-cut": 3, "no-targets": 4}[step]
	if len(runs) != expected_runs:
	    problems.append(f"expected {expected_runs} run bundles under spindle/, found {sorted(runs)}")

	def skipped_with_reasons(name, d, pairs):
	    for serial, why in pairs:
	        s = [x for x in d.get("skipped", []) if serial in x.get("id", "")]
	        if not s:
	            problems.append(f"{name}: {serial} not listed as skipped")
	        elif why not in s[0].get("reason", ""):
	            problems.append(f"{name}: {serial} skip reason {s[0].get('reason')!r} lacks {why!r}")

	def unplugged_mid_oltp(name, serial, phases):
	    # The disk pulled once its OLTP phase began: fileio measured, that phase failed naming
	    # the disconnection, nothing after it measured.
	    failed = [p for p in phases if p.get("status") == "failed"]
	    if not [p for p in phases if p["name"].startswith("fileio-") and p.get("result") and p.get("status") == "ok"]:
	        problems.append(f"{name}: {serial}: no fileio results before the unplug")
	    gone = [p for p in failed if "disconnected" in (p.get("error") or "")]
	    if not gone or not gone[0]["name"].startswith(("oltp-", "mysqld")):
	        problems.append(f"{name}: {serial}: no OLTP phase failed as disconnected: {[(p['name'], p.get('error')) for p in failed]}")
	    if [p for p in phases if p["name"].startswith("tpcc-w") and p.get("status") == "ok"]:
	        problems.append(f"{name}: {serial}: TPC-C measured after the disk was unplugged")

	def per_server(name, serial, t, phases, page, summary, csv):
	    # flavors = ["mariadb", "mysql"]: the database phases once per server, each server
	    # recorded with its effective I/O variables, and every rendering naming both.
	    servers = {s.get("flavor"): s for s in t.get("servers") or []}
	    if sorted(servers) != ["MariaDB", "MySQL"]:
	        problems.append(f"{name}: {serial}: servers {sorted(map(str, servers))}, expected MariaDB and MySQL")
	        return
	    if not servers["MySQL"].get("version", "").startswith(("8.", "9.")):
	        problems.append(f"{name}: {serial}: MySQL version {servers['MySQL'].get('version')!r}")
	    for flavor, s in servers.items():
	        if not s.get("effective", {}).get("innodb_flush_method"):
	            problems.append(f"{name}: {serial}: {flavor}'s effective I/O variables not recorded")
	    for key in ("mariadb", "mysql"):
	        for kind in ("oltp", "tpcc"):
	            ran = [p["name"] for p in phases if p["name"].startswith(kind + "-") and p["name"].endswith("-" + key)
	                   and p.get("status") == "ok" and p.get("result")]
	            if not ran:
	                problems.append(f"{name}: {serial}: no {kind} result on {key}")
	            for phase in ran[:1]:
	                for where, text in (("summary.txt", summary), ("results.csv", csv), ("report.html", page)):
	                    if phase not in text:
	                        problems.append(f"{name}: {serial}: {where} does not show {phase}")
	    if not [p for p in phases if p["name"].startswith("oltp-") and p["name"].endswith("-mysql") and p.get("server_io")]:
	        problems.append(f"{name}: {serial}: no OLTP phase on MySQL recorded the server's I/O counters")

	def validity(name, d, summary, page):
	    # Every figure judged (issue 38): each phase with a result carries a verdict; quick's
	    # fileio reads without O_DIRECT on 256 MiB (under 2x the guest's RAM) are red, naming the
	    # page cache with the numbers; summary.txt and report.html show the lines.
	    for t in d.get("targets", []):
	        for p in t.get("phases", []):
	            v = p.get("validity")
	            if p.get("result") and (not v or v.get("verdict") not in ("green", "amber", "red")):
	                problems.append(f"{name}: {p['name']}: no validity verdict: {v!r}")
	            if p["name"].startswith(("fileio-seqrd", "fileio-rndrd")) and p.get("result"):
	                cache = [r for r in (v or {}).get("reasons", []) if r.get("rule") == "page_cache"]
	                if (v or {}).get("verdict") != "red" or not cache or "RAM" not in cache[0].get("text", ""):
	                    problems.append(f"{name}: {p['name']}: a cache-sized read not red for the page cache: {v!r}")
	    for where, text, red in (("summary.txt", summary, "validity: red — "),
	                             ("report.html", page, 'validity: <b class="v-red">red</b> — ')):
	        if red not in text:
	            problems.append(f"{name}: {where} shows no {red!r} line")

	def complete_run(name, d, unplugged=None, flavors=False):
	    run = root / "spindle" / name
	    problems.extend(f"{name}/{f} missing" for f in ("summary.txt", "results.csv", "report.html") if not (run / f).is_file())
	    read = lambda f: (run / f).read_text() if (run / f).is_file() else ""
	    page, summary, csv = read("report.html"), read("summary.txt"), read("results.csv")
	    problems.extend(f"{name}: report.html does not name {s}" for s in (blank1, blank2) if s not in page)
	    if d.get("schema_version") != 5:
	        problems.append(f"{name}: schema_version {d.get('schema_version')} (checks written for 5)")
	    validity(name, d, summary, page)
	    if d.get("status") != "complete":
	        problems.append(f"{name}: run status {d.get('status')!r}, expected 'complete'")
	    targets = {(t.get("disk") or {}).get("serial"): t for t in d.get("targets", [])}
	    for serial in (blank1, blank2):
	        t = targets.get(serial)
	        if t is None:
	            problems.append(f"{name}: {serial} not benchmarked (targets: {sorted(map(str, targets))})")
	            continue
	        phases = t.get("phases", [])
	        if serial == unplugged:
	            unplugged_mid_oltp(name, serial, phases)
	            continue
	        bad = [(p["name"], p["status"]) for p in phases if p.get("status") != "ok"]
	        if bad:
	            problems.append(f"{name}: {serial}: phases not ok: {bad}")
	        for kind in ("fileio", "oltp", "tpcc"):
	            if not [p for p in phases if p["name"].startswith(kind + "-") and p.get("result")]:
	                problems.append(f"{name}: {serial}: no {kind} results")
	        tpmc = [((p.get("result") or {}).get("counters") or {}).get("tpmc") for p in phases if p["name"].startswith("tpcc-w")]
	        if not tpmc or not all(isinstance(x, (int, float)) and x > 0 for x in tpmc):
	            problems.append(f"{name}: {serial}: TpmC {tpmc}, expected > 0")
	        servers = t.get("servers") or [{}]
	        if not servers[0].get("effective", {}).get("innodb_flush_method"):
	            problems.append(f"{name}: {serial}: the server's effective I/O variables not recorded: {servers!r}")
	        if not [p for p in phases if p["name"].startswith("oltp-") and p.get("result") and p.get("server_io")]:
	            problems.append(f"{name}: {serial}: no OLTP phase recorded the server's I/O counters")
	        if flavors:
	            per_server(name, serial, t, phases, page, summary, csv)
	        if not t.get("smart") or not ("reason" in json.dumps(t["smart"]) or "power_on" in json.dumps(t["smart"])):
	            problems.append(f"{name}: {serial}: SMART neither read nor explained: {t.get('smart')!r}")
	    skipped_with_reasons(name, d, ((data, "holds data"), (usb2, "USB 2")))
	    print(f"bundle {name}: complete, targets {sorted(map(str, targets))}, {len(d.get('skipped', []))} skipped")

	by_status = {}
	for name, d in runs.items():
	    by_status.setdefault(d.get("status"), []).append(name)
	first = sorted(runs)[0] if runs else None
	if step == "first" and first:
	    complete_run(first, runs[first], flavors=True)
	if step == "after-cut":
	    cut = by_status.get("interrupted", [])
	    if len(cut) != 1:
	        problems.append(f"expected one interrupted bundle, found {cut} ({ {k: v for k, v in by_status.items()} })")
	    for name in cut:
	        d = runs[name]
	        serials = {(t.get("disk") or {}).get("serial") for t in d.get("targets", [])}
	        if not {blank1, blank2} <= serials:
	            problems.append(f"{name}: interrupted bundle lists targets {sorted(map(str, serials))}, expected both blank disks")
	        states = [p.get("status") for t in d.get("targets", []) for p in t.get("phases", [])]
	        if "interrupted" not in states or "running" in states:
	            problems.append(f"{name}: interrupted bundle's phase statuses {states}: expected one 'interrupted', none 'running'")
	        summary = (root / "spindle" / name / "summary.txt").read_text()
	        if "INTERRUPTED: the machine lost power or spindle stopped during " not in summary:
	            problems.append(f"{name}: summary.txt does not say where the run was interrupted")
	        print(f"bundle {name}: interrupted, targets {sorted(map(str, serials))}, phases {states}")
	    again = [n for n in by_status.get("complete", []) if n != first]
	    if len(again) != 1:
	        problems.append(f"expected a second complete bundle after the power cut, found {again}")
	    for name in again:
	        complete_run(name, runs[name], unplugged=blank2)
	if step == "no-targets":
	    none = by_status.get("no_targets", [])
	    if len(none) != 1:
	        problems.append(f"expected one no_targets bundle, found {none}")
	    for name in none:
	        d = runs[name]
	        if d.get("targets"):
	            problems.append(f"{name}: no_targets bundle with targets")
	        skipped_with_reasons(name, d, ((data, "holds data"), (usb2, "USB 2")))
	        print(f"bundle {name}: no_targets, skipped {[x.get('id') for x in d.get('skipped', [])]}")
	for p in problems:
	    print("bundle:", p)
	sys.exit(1 if problems else 0)
	PY
}

# The first run's bundle, file by file, as the first boot left it (checked after later boots).
record_first_bundle() {
	(cd "$STICK_COPY" && find spindle -mindepth 2 -type f -path 'spindle/2*' | sort | xargs -d '\n' sha256sum) >"$WORK/first-bundle.sha256"
	[[ -s $WORK/first-bundle.sha256 ]]
}
first_bundle_unchanged() { (cd "$STICK_COPY" && sha256sum --quiet -c "$WORK/first-bundle.sha256"); }

daemon_ran() { console_has '^\[ *[0-9.]+\] spindle\[[0-9]+\]: spindle: '; }
guest_finished() { console_has 'SPINDLE-E2E: run finished' && console_has 'SPINDLE-E2E: failed-units count=0'; }

# The image's Oracle MySQL: the wrapper is in the root partition and the shipped spindle.toml
# names it in [mysqld.binaries] with the same line as the test-only virt-gpio.toml.
image_names_its_mysql() {
	local line='mysql = "/opt/spindle-mysql/spindle/bin/mysqld"' toml
	toml=$(debugfs -R "cat /etc/spindle/spindle.toml" "$WORK/root.ext4" 2>/dev/null)
	grep -qxF "$line" <<<"$toml" || { log "/etc/spindle/spindle.toml lacks the line $line"; return 1; }
	debugfs -R "stat /opt/spindle-mysql/spindle/bin/mysqld" "$WORK/root.ext4" 2>/dev/null | grep -q 'Type: regular' ||
		{ log "no /opt/spindle-mysql/spindle/bin/mysqld in the root partition"; return 1; }
	grep -qxF "$line" "$IMAGE_DIR/rootfs-overlay/usr/local/share/spindle/e2e/virt-gpio.toml"
}

full_boot_first() {
	check "first: the image carries Oracle MySQL and its spindle.toml names it" image_names_its_mysql
	run_qemu first "" press_when "$PRESSABLE"
	copy_stick_contents first
	check "first: guest powered off by itself before the timeout" test "$QEMU_RC" -eq 0
	check "first: spindle daemon ran at boot (spindle.service output on the console)" daemon_ran
	check "first: the daemon drives the GPIO LEDs and reads the button on the PL061" console_has 'spindle: button: GPIO line 3 on chip .*pl061'
	check "first: the run was started by the button (a short press reached the state machine)" console_has 'spindle: ButtonShort: Idle -> Running'
	check "first: run finished, stick safe to remove, no failed systemd units" guest_finished
	check "first: root filesystem mounted read-only" console_has 'SPINDLE-E2E: root-mount ro[,$]'
	check "first: data partition grown to the card" console_has 'spindle-growdata: grew'
	check "first: one complete bundle (fileio, OLTP, TpmC for both blank disks on MariaDB and MySQL, skips with reasons)" check_bundles first
	check "first: bundle recorded for the later boots" record_first_bundle
	check "first: LEDs ready, running (fileio, OLTP, TPC-C), copying, safe to remove with red figures, dark after the daemon (leds-first.txt)" \
		check_leds first --expect "ready (2 disk(s))" --expect "running (Fileio)" --expect "running (Oltp)" \
		--expect "running (Tpcc)" --expect "copying results to the stick" --final "safe to remove the stick; some figures judged red"
}

full_boot_power_cut() {
	set_stick_config check false
	power_cut powercut '\] spindle\[[0-9]+\]: spindle: \[3/[0-9]+\] .*fileio-'
	check "powercut: QEMU killed while the second run was in its fileio phases" test "$POWER_CUT" = yes
	check "powercut: the run was started by the button" console_has 'spindle: ButtonShort: Idle -> Running'
	check "powercut: the run took the stick's profile 'check'" console_has 'starting run .*profile check'
	check "powercut: LEDs ready, then running (leds-powercut.txt)" \
		check_leds powercut --expect "ready (2 disk(s))" --expect "running (Fileio)"
}

full_boot_after_cut() {
	run_qemu after-cut "" press_then_unplug_blank2
	copy_stick_contents after-cut
	check "after-cut: guest powered off by itself before the timeout" test "$QEMU_RC" -eq 0
	check "after-cut: run finished, stick safe to remove, no failed systemd units" guest_finished
	check "after-cut: BLANK2 unplugged during its OLTP phase" test "$UNPLUGGED" != no
	check "after-cut: interrupted bundle (both targets, phase interrupted); a second run: BLANK1 complete, BLANK2 disconnected mid-OLTP" check_bundles after-cut
	check "after-cut: the first bundle is byte-for-byte untouched" first_bundle_unchanged
	check "after-cut: LEDs copying, running, then 'safe to remove, some tests failed' kept until the daemon stopped (leds-after-cut.txt)" \
		check_leds after-cut --expect "copying results to the stick" --expect "running (Fileio)" \
		--expect "running (Oltp)" --final "safe to remove the stick; some tests failed"
}

full_boot_no_targets() {
	set_stick_config check true
	run_qemu no-targets no-blanks
	copy_stick_contents no-targets
	check "no-targets: guest powered off by itself before the timeout" test "$QEMU_RC" -eq 0
	check "no-targets: the daemon said so and the guest finished" guest_finished
	check "no-targets: a no_targets bundle names the data disk and the USB2 disk with reasons" check_bundles no-targets
	check "no-targets: LEDs 'no disks' before and after the run (leds-no-targets.txt)" \
		check_leds no-targets --expect "no disks" --final "no disks"
}

# raspi4b halts after "reboot: Power down" without leaving QEMU (no PSCI system-off on that
# board): the host ends it once the guest said so.
quit_after_power_down() {
	wait_console 'reboot: (Power down|System halted)' || return 1
	sleep 1
	monitor quit >/dev/null 2>&1 || true
}

# The module's vermagic names the kernel that booted.
hwmon_module_matches_kernel() {
	local kernel
	kernel=$(grep -aoE 'SPINDLE-E2E: start uptime=[0-9.]+s kernel=[^ ]+' "$CONSOLE.txt" | head -n1 | sed 's/.*kernel=//')
	# Fixed strings: the kernel's name has a '+' (7.3.4+deb13-arm64).
	[[ -n $kernel ]] && grep -qaF "SPINDLE-E2E: hwmon-module file=/lib/modules/$kernel/updates/raspberrypi-hwmon.ko vermagic=$kernel" "$CONSOLE.txt"
}

pi4_boot() {
	patch_pi4_dtb
	make_pi4_sdcard
	run_qemu pi4 "" quit_after_power_down
	check "pi4: the guest ran its test and powered down before the timeout" console_has 'SPINDLE-E2E: powering off'
	check "pi4: the emulated board is a Raspberry Pi 4 (device tree model)" console_has 'SPINDLE-E2E: model Raspberry Pi 4 Model B'
	check "pi4: root from the SD card (mmcblk0), mounted read-only" console_has 'SPINDLE-E2E: root-mount ro[,$]'
	check "pi4: data partition grown to the card" console_has 'spindle-growdata: grew'
	check "pi4: spindle daemon started" daemon_ran
	check "pi4: no /dev/gpiomem on this kernel (why rppal could not work)" console_has 'SPINDLE-E2E: gpiomem absent'
	check "pi4: the daemon drives the GPIO LEDs on the Pi's own controller (pinctrl-bcm2711, lines 17/27/22)" \
		console_has 'spindle: status: GPIO LEDs on chip .*pinctrl-bcm2711.*green line 17, yellow line 27, red line 22'
	check "pi4: no 'Permission denied' from the status or button setup" bash -c "! grep -aE 'spindle: (status|button): .*Permission denied' '$CONSOLE.txt'"
	check "pi4: the button's line was requested on pinctrl-bcm2711 (presses: virt only)" console_has 'spindle: button: GPIO line 26 on chip .*pinctrl-bcm2711'
	check "pi4: the initramfs recorded the devices still deferred when it handed the root over" \
		console_has 'SPINDLE-E2E: deferred-at-root count='
	check "pi4: no device on a root path (SD/MMC, USB, PCIe) deferred on a supplier whose driver was not in the initramfs" \
		bash -c "! grep -aE 'SPINDLE-E2E: deferred-at-root device=[^ ]*(mmc|usb|pcie|sdhci|xhci)[^ ]* .*loaded-at-root=no' '$CONSOLE.txt'"
	# QEMU's firmware does not answer the expander's GPIO calls, so the real Pi 4 slot (EMMC2)
	# stays deferred on its regulators here: which shows their drivers were in the initramfs.
	check "pi4: EMMC2 (the real Pi 4 SD slot): its two regulators' drivers (gpio_regulator, fixed) were loaded when the root was handed over" \
		bash -c "grep -qaE 'deferred-at-root device=fe340000.mmc supplier=[^ ]+ driver=gpio_regulator loaded-at-root=yes' '$CONSOLE.txt' && grep -qaE 'deferred-at-root device=fe340000.mmc supplier=[^ ]+ driver=fixed loaded-at-root=yes' '$CONSOLE.txt'"
	check "pi4: raspberrypi-hwmon built for the booted kernel (vermagic)" hwmon_module_matches_kernel
	check "pi4: raspberrypi-hwmon loaded" console_has 'SPINDLE-E2E: hwmon-module loaded=yes'
	check "pi4: the driver bound: the firmware answered get-throttled and rpi_volt reads in0_lcrit_alarm" \
		console_has 'SPINDLE-E2E: hwmon rpi_volt hwmon[0-9]+ in0_lcrit_alarm=[01]$'
	check "pi4: the daemon reads under-voltage from rpi_volt and says what it cannot measure, and why" \
		console_has "spindle: sensors: temperature not measured \(no thermal zone.*under-voltage read from hwmon rpi_volt .*throttling not measured \(this kernel has no get_throttled file"
	check "pi4: LEDs booting, then 'no disks' in GPLEV0, dark after the daemon stopped (leds-pi4.txt)" \
		check_leds pi4 --expect "no disks" --final "no disks"
}

check_datadisk_unchanged() {
	[[ $(sha256sum "$WORK/datadisk.img" | cut -d' ' -f1) == "$(cat "$WORK/datadisk.sha256")" ]]
}

write_summary() {
	local boot
	boot=$(grep -aoE 'SPINDLE-E2E: start uptime=[0-9.]+' "$ARTIFACTS"/console-*.txt | head -n1 | grep -oE '[0-9.]+$' || true)
	{
		echo "mode=$MODE"
		echo "image=$IMAGE"
		echo "guest_boot_to_test_start_s=${boot:-unknown}"
		echo "qemu_wall_s=$TOTAL_QEMU_SECONDS"
		echo "initramfs_panic_retries=$INITRAMFS_RETRIES"
		echo "e2e_total_s=$((SECONDS - E2E_START))"
		echo "failures=$failures"
	} | tee "$ARTIFACTS/summary.txt" >&2
}

main() {
	E2E_START=$SECONDS
	TOTAL_QEMU_SECONDS=0
	INITRAMFS_RETRIES=0
	parse_args "$@"
	require_host_tools
	mkdir -p "$WORK"
	extract_kernel_initrd
	extract_root_partition
	detect_mode
	if [[ $MODE == pi4 ]]; then
		LED_REGISTER=$PI4_LED_REGISTER
		LED_PINS=$PI4_LED_PINS
		command -v fdtput >/dev/null || die "fdtput missing (run image/scripts/host-deps.sh: device-tree-compiler)"
		qemu-system-aarch64 -M help | grep -q '^raspi4b ' ||
			die "this QEMU has no raspi4b machine (QEMU 9 or later: run image/scripts/host-deps.sh)"
	fi
	TIMEOUT=${TIMEOUT:-$([[ $MODE == full ]] && echo 2400 || echo 900)}
	ARTIFACTS=$REPO_DIR/ci-artifacts/e2e-$MODE
	rm -rf "$ARTIFACTS"
	mkdir -p "$ARTIFACTS"
	make_disks
	case $MODE in
	smoke)
		run_qemu smoke
		check "guest powered off by itself before the timeout" test "$QEMU_RC" -eq 0
		check_smoke
		;;
	full)
		full_boot_first
		full_boot_power_cut
		full_boot_after_cut
		full_boot_no_targets
		;;
	pi4) pi4_boot ;;
	esac
	check "data disk bytes unchanged (sha256)" check_datadisk_unchanged
	write_summary
	((failures == 0)) || die "$failures check(s) failed; artifacts in $ARTIFACTS"
	free_work_disks
	log "PASS ($MODE); artifacts in $ARTIFACTS"
}

main "$@"
