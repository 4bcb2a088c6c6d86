# shellcheck shell=bash
# Shared by scripts/deps.sh and image/scripts/host-deps.sh (sourced, not run): which tool comes
# from which Debian package, one apt-get transaction for what is missing, and the check after
# installing that names the package for every tool still missing.
#
# A requirement is one string "TOOL PACKAGE": TOOL is a command name (looked up on PATH, then in
# /usr/sbin and /sbin, which a non-root PATH may lack) or an absolute path that must exist.

# found TOOL: the tool is there.
found() {
	case $1 in
	/*) [[ -e $1 ]] ;;
	*) command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 || -x /sbin/$1 ]] ;;
	esac
}

# pkg_installed PACKAGE: dpkg has it fully installed.
pkg_installed() {
	local status
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) || return 1
	[[ $status == ii* ]]
}

# pkg_version PACKAGE: the installed version, empty when not installed.
pkg_version() {
	pkg_installed "$1" || return 0
	dpkg-query -W -f='${Version}' "$1"
}

# packages_to_install REQUIREMENT...: prints (one per line, no duplicates) every package that is
# not installed or whose tool is missing.
packages_to_install() {
	local req tool pkg seen=" "
	for req in "$@"; do
		read -r tool pkg <<<"$req"
		[[ $seen == *" $pkg "* ]] && continue
		if ! pkg_installed "$pkg" || ! found "$tool"; then
			seen+="$pkg "
			echo "$pkg"
		fi
	done
}

# as_root COMMAND...: runs it as root (through sudo when not root).
as_root() {
	if ((EUID == 0)); then "$@"; else sudo "$@"; fi
}

# apt_install WHO ARG...: one `apt-get update` + `apt-get install` transaction, without
# recommended packages (every tool a script needs is named in its requirements). Quiet on
# success; on failure the apt output is shown.
apt_install() {
	local who=$1 log rc=0
	shift
	echo "$who: installing $*" >&2
	log=$(mktemp)
	as_root apt-get update -qq >"$log" 2>&1 &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			--allow-downgrades "$@" >>"$log" 2>&1 || rc=$?
	if ((rc != 0)); then
		cat "$log" >&2
		rm -f "$log"
		echo "$who: apt-get failed (rc=$rc) installing: $*" >&2
		return 1
	fi
	rm -f "$log"
}

# check_requirements WHO REQUIREMENT...: after installing, every tool must be there. Fails
# listing each missing tool with its package and the command that installs them.
check_requirements() {
	local who=$1 req tool pkg missing=() pkgs=" "
	shift
	for req in "$@"; do
		read -r tool pkg <<<"$req"
		found "$tool" && continue
		missing+=("$tool (package $pkg)")
		[[ $pkgs == *" $pkg "* ]] || pkgs+="$pkg "
	done
	((${#missing[@]} == 0)) && return 0
	echo "$who: still missing after installing: ${missing[*]}" >&2
	echo "$who: install them with: apt-get install${pkgs% } (or apt-get install --reinstall for a package that is installed but lacks the file)" >&2
	return 1
}
