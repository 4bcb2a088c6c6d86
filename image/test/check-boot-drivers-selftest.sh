#!/bin/bash
# Self-test of scripts/check-boot-drivers.py against a staged image root: the check passes on
# the tree as built, and fails, naming the module, the board and the fix, when a module a
# board's root path needs is taken out of the initrd (--drop): gpio_regulator (the SD card's
# 1.8 V regulator on the Pi 4 and the Pi 5) and sdhci_brcmstb (the Pi 5's SD controller only).
# Read-only: the tree is not modified.
#
# Usage: check-boot-drivers-selftest.sh ROOT
set -euo pipefail

CHECK=$(cd "$(dirname "$0")/../scripts" && pwd)/check-boot-drivers.py
PI4="Raspberry Pi 4"
PI5C0="Raspberry Pi 5 (C0)"
PI5D0="Raspberry Pi 5 (D0)"
OUT=

fail() {
	echo "check-boot-drivers-selftest: FAIL: $*" >&2
	if [[ -n $OUT ]]; then printf '%s\n' "--- output of the check:" "$OUT" >&2; fi
	exit 1
}

# run_check EXPECTED_STATUS ARGS...: runs the check on ROOT, its output (both streams) in OUT.
run_check() {
	local expected=$1 status=0
	shift
	echo "check-boot-drivers-selftest: check-boot-drivers.py $* ROOT (expecting exit status $expected)" >&2
	OUT=$(python3 "$CHECK" "$@" "$ROOT" 2>&1) || status=$?
	((status == expected)) || fail "check-boot-drivers.py $* exited with $status, expected $expected"
}

# missing_lines: the check's MISSING messages.
missing_lines() { grep -F ': MISSING on ' <<<"$OUT" || true; }

# expect_missing MODULE BOARD...: every MISSING message names MODULE (nothing else is missing),
# and there is one for each BOARD that names the fix.
expect_missing() {
	local module=$1 board lines
	shift
	lines=$(missing_lines)
	[[ -n $lines ]] || fail "no MISSING message with $module dropped"
	if grep -vF "module $module " <<<"$lines" >/dev/null; then
		fail "MISSING messages other than for $module: $(grep -vF "module $module " <<<"$lines")"
	fi
	for board in "$@"; do
		grep -F "MISSING on $board (" <<<"$lines" | grep -F "module $module " |
			grep -qF "Fix: add $module to image/initramfs/spindle-modules" ||
			fail "no message naming $module, the board \"$board\" and the fix"
	done
}

# expect_not_board BOARD: no MISSING message is about BOARD.
expect_not_board() {
	if grep -qF "MISSING on $1 (" <<<"$(missing_lines)"; then
		fail "a MISSING message names \"$1\", which does not need the dropped module"
	fi
}

main() {
	[[ $# -eq 1 ]] || { echo "usage: check-boot-drivers-selftest.sh ROOT" >&2; exit 2; }
	ROOT=$1
	[[ -d $ROOT ]] || fail "no such directory: $ROOT"
	[[ -f $CHECK ]] || fail "no $CHECK"

	run_check 0
	grep -qF "OK: every driver" <<<"$OUT" || fail "no OK line on success"
	for board in "$PI4" "$PI5C0" "$PI5D0"; do
		grep -qF "$board: " <<<"$OUT" || fail "no table for \"$board\""
	done
	grep -E '^  /' <<<"$OUT" | grep -q 'MISSING' && fail "a table row says MISSING although the check passed"

	run_check 1 --quiet --drop gpio_regulator
	expect_missing gpio_regulator "$PI4" "$PI5C0" "$PI5D0"

	run_check 1 --quiet --drop sdhci_brcmstb
	expect_missing sdhci_brcmstb "$PI5C0" "$PI5D0"
	expect_not_board "$PI4"

	# A module's own dependency counts too (modules.dep): cqhci is one of sdhci_brcmstb's.
	run_check 1 --quiet --drop cqhci
	grep -F "MISSING on $PI5C0 (" <<<"$(missing_lines)" | grep -qF "cqhci" ||
		fail "dropping cqhci (a dependency of sdhci_brcmstb) is not reported for \"$PI5C0\""

	# --boards leaves the other boards out.
	run_check 0 --quiet --boards pi4 --drop sdhci_brcmstb

	echo "check-boot-drivers-selftest: OK" >&2
}

main "$@"
