#!/usr/bin/env bash
# Provides an Oracle MySQL server that runs on this Debian 12 host, for spindle's tests and CI,
# and prints the path of its mysqld (a wrapper script) as the only line on stdout.
#   bash scripts/mysql-root.sh                builds the root if needed, prints the path
#   bash scripts/mysql-root.sh --print-path   prints the path of a complete root, never builds
#                                             (exit 1 when there is none)
#   bash scripts/mysql-root.sh --rebuild      builds a new root even when one is cached
#   bash scripts/mysql-root.sh --copy-to DIR  builds the root if needed, then copies what the
#                                             server needs at run time into the new folder DIR
#                                             (the image's /opt/spindle-mysql) and prints DIR's
#                                             wrapper
#   bash scripts/mysql-root.sh --arch arm64   (with any of the above) a root for another
#                                             architecture, e.g. the image's; its maintainer
#                                             scripts run under qemu-user's binfmt_misc
# Debian's only Oracle MySQL (9.x, mysql-server-core) is in sid and needs sid's libc and
# libstdc++, so it lives in a minimal sid root made with mmdebstrap under
# <cache>/sid-<arch>/ (<cache> is $SPINDLE_MYSQL_CACHE, else /var/cache/spindle-mysql; the mirror
# is $SPINDLE_MYSQL_MIRROR, else deb.debian.org). The host runs the root's mysqld with the root's
# own dynamic loader through <root>/spindle/bin/mysqld, a wrapper that finds the root from its
# own path, so a copy of the root works wherever it is put (the image carries one under /opt).
# Only the -core packages go in: the mysql-server package's postinst would start a server.
# A root is used only when it is complete: it is built as <root>.partial, proven to run
# (mysqld --version), stamped with the mysql-server-core version it got, and renamed. A cached
# root is checked against its own dpkg database without touching the network. Building needs
# root; it installs mmdebstrap with apt when missing.
set -euo pipefail
# shellcheck source=deps-common.sh
. "$(dirname "$0")/deps-common.sh"

REQUIREMENTS=(
	"mmdebstrap mmdebstrap"
	"/usr/share/keyrings/debian-archive-keyring.gpg debian-archive-keyring" # sid's Release signature
	"findmnt util-linux" "flock util-linux"
)
PACKAGES=mysql-server-core,mysql-client-core
MIRROR=${SPINDLE_MYSQL_MIRROR:-http://deb.debian.org/debian}
CACHE=${SPINDLE_MYSQL_CACHE:-/var/cache/spindle-mysql}

log() { echo "mysql-root: $*" >&2; }
die() { log "$*"; exit 1; }

usage() {
	sed -n '2,14s/^# \{0,1\}//p' "$0" >&2
	exit "$1"
}

# The cache path goes verbatim into the wrapper's R= line and is matched against findmnt's
# (escaped) mount list, so it is kept to plain characters.
check_cache_path() {
	[[ $CACHE == /* ]] || die "SPINDLE_MYSQL_CACHE must be an absolute path (got '$CACHE')"
	[[ $CACHE =~ ^[A-Za-z0-9/._+-]+$ ]] ||
		die "SPINDLE_MYSQL_CACHE may only hold letters, digits and / . _ + - (got '$CACHE')"
	CACHE=${CACHE%/}
}

# tree_version TREE: mysql-server-core's version in the tree's dpkg database, empty when it is
# not fully installed there (or when mysql-client-core is not).
tree_version() {
	local admin=$1/var/lib/dpkg pkg status
	[[ -f $admin/status ]] || return 0
	for pkg in mysql-client-core mysql-server-core; do
		status=$(dpkg-query --admindir="$admin" -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null) || return 0
		[[ $status == ii* ]] || return 0
	done
	dpkg-query --admindir="$admin" -W -f='${Version}' mysql-server-core
}

# tree_loader TREE: the tree's dynamic loader relative to the tree
# (usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2, usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1,
# ...), as libc6's file list has it in the multiarch directory.
tree_loader() {
	local tree=$1 list loaders
	list=$tree/var/lib/dpkg/info/libc6:$ARCH.list
	[[ -f $list ]] || list=$tree/var/lib/dpkg/info/libc6.list
	[[ -f $list ]] || die "$tree has no libc6 file list (looked for libc6:$ARCH.list); rebuild with --rebuild"
	loaders=$(grep -E '^/usr/lib/[^/]+-linux-[^/]+/ld-linux[^/]*\.so\.[0-9]+$' "$list" || true)
	[[ -n $loaders && $loaders != *$'\n'* ]] ||
		die "cannot tell the dynamic loader of $tree from $list (found: ${loaders:-none}); rebuild with --rebuild"
	[[ -f $tree$loaders && ! -L $tree$loaders ]] ||
		die "the loader $tree$loaders is missing or a symlink; rebuild with --rebuild"
	echo "${loaders#/}"
}

# wrapper_text LOADER VERSION: the wrapper, which finds its root from its own path
# (<root>/spindle/bin/mysqld, symlinks resolved). The loader is reached through a symlink named
# mysqld so the process is called mysqld. The caller's options come first (mysqld accepts
# --defaults-file/--no-defaults only as the first option), the root's paths after them (they also
# override any the caller's my.cnf sets; --version is fine with them).
wrapper_text() {
	local loader=$1 version=$2 ma
	ma=$(basename "$(dirname "$loader")")
	cat <<EOF
#!/bin/sh
# Written by spindle's scripts/mysql-root.sh: Oracle MySQL $version from a Debian sid root,
# run with that root's own dynamic loader. The root is the folder that holds spindle/bin/.
R=\$(readlink -f -- "\$0") && R=\${R%/spindle/bin/mysqld}
[ -x "\$R/usr/sbin/mysqld" ] || { echo "\$0: no MySQL root around this wrapper (expected <root>/spindle/bin/mysqld)" >&2; exit 127; }
exec "\$R/spindle/ld/mysqld" --library-path "\$R/usr/lib/$ma:\$R/lib/$ma" --argv0 "\$R/usr/sbin/mysqld" "\$R/usr/sbin/mysqld" "\$@" --basedir="\$R/usr" --lc-messages-dir="\$R/usr/share/mysql" --character-sets-dir="\$R/usr/share/mysql/charsets" --plugin-dir="\$R/usr/lib/mysql/plugin"
EOF
}

# write_wrapper TREE: writes TREE/spindle/bin/mysqld.
write_wrapper() {
	local tree=$1 loader version
	loader=$(tree_loader "$tree")
	version=$(cat "$tree/spindle/version")
	mkdir -p "$tree/spindle/ld" "$tree/spindle/bin"
	ln -sfn "../../$loader" "$tree/spindle/ld/mysqld"
	wrapper_text "$loader" "$version" >"$tree/spindle/bin/mysqld.tmp"
	chmod 755 "$tree/spindle/bin/mysqld.tmp"
	mv -f "$tree/spindle/bin/mysqld.tmp" "$tree/spindle/bin/mysqld"
}

# root_is_complete: the cached root was stamped and still has that mysql-server-core
# installed. Offline and quick.
root_is_complete() {
	local stamp=$ROOT/spindle/version
	[[ -s $stamp && -x $ROOT/usr/sbin/mysqld && -x $ROOT/spindle/ld/mysqld ]] || return 1
	[[ $(tree_version "$ROOT") == "$(cat "$stamp")" ]]
}

# wrapper_is_current: the root's wrapper is the one this script writes now.
wrapper_is_current() {
	local loader
	loader=$(tree_loader "$ROOT" 2>/dev/null) || return 1
	[[ $(cat "$WRAPPER" 2>/dev/null) == "$(wrapper_text "$loader" "$(cat "$ROOT/spindle/version")")" ]]
}

# A killed mmdebstrap can leave /proc, /sys, /dev/pts mounted inside its tree: never rm -rf
# through a mount point.
remove_tree() {
	local tree=$1
	[[ -e $tree || -L $tree ]] || return 0
	if findmnt -rn -o TARGET | awk -v t="$tree" '$0 == t || index($0, t "/") == 1 { f = 1 } END { exit !f }'; then
		die "mounts remain under $tree; unmount them (findmnt | grep $tree), then rerun"
	fi
	rm -rf "$tree"
}

install_tools() {
	local need
	need=$(packages_to_install "${REQUIREMENTS[@]}")
	if [[ -n $need ]]; then
		# shellcheck disable=SC2086 # one package per word
		apt_install mysql-root $need
	fi
	check_requirements mysql-root "${REQUIREMENTS[@]}"
}

run_mmdebstrap() {
	local out=$1 buildlog=$2
	if ! mmdebstrap --variant=minbase --format=directory --arch="$ARCH" --components=main \
		--aptopt='Acquire::Check-Valid-Until "false"' --include="$PACKAGES" \
		sid "$out" "$MIRROR" >"$buildlog" 2>&1; then
		tail -n 25 "$buildlog" >&2
		die "mmdebstrap failed (full log: $buildlog). sid may be mid-transition: retry later, or pin a" \
			"day with SPINDLE_MYSQL_MIRROR=http://snapshot.debian.org/archive/debian/<YYYYMMDDT000000Z>/"
	fi
}

# prove_runs WRAPPER: mysqld starts and tells its version.
prove_runs() {
	local out
	out=$("$1" --version 2>&1) || true
	[[ $out == *" Ver "[0-9]* ]] ||
		die "the sid root's mysqld does not run on this host ($1 --version printed: ${out:-nothing}); rebuild with --rebuild, or report the output"
}

build_root() {
	install_tools
	local partial=$ROOT.partial start=$SECONDS version
	remove_tree "$partial"
	log "building $ROOT with mmdebstrap (sid, $PACKAGES; about 30 s, 5 min for another architecture)"
	run_mmdebstrap "$partial" "$ROOT.log"
	version=$(tree_version "$partial")
	[[ -n $version ]] || die "mmdebstrap finished but mysql-server-core is not installed in $partial (log: $ROOT.log)"
	mkdir -p "$partial/spindle"
	echo "$version" >"$partial/spindle/version"
	write_wrapper "$partial"
	prove_runs "$partial/spindle/bin/mysqld"
	# The rename is the commit: a root without it is never used.
	remove_tree "$ROOT.old"
	[[ ! -e $ROOT ]] || mv "$ROOT" "$ROOT.old"
	mv "$partial" "$ROOT"
	remove_tree "$ROOT.old"
	rm -f "$ROOT.log"
	log "built Oracle MySQL $version in $((SECONDS - start)) s ($(du -sh "$ROOT" | cut -f1))"
}

# arch_qemu_name ARCH: qemu-user's name for a Debian architecture (its binfmt_misc entry).
arch_qemu_name() {
	case $1 in
	arm64) echo aarch64 ;;
	amd64) echo x86_64 ;;
	armhf) echo arm ;;
	*) echo "$1" ;;
	esac
}

# runtime_libraries: the shared libraries the root's loader resolves for its mysqld, one path
# (inside the root) per line. Fails on a library the root does not hold.
runtime_libraries() {
	local loader ma out line lib
	loader=$(tree_loader "$ROOT")
	ma=$(basename "$(dirname "$loader")")
	out=$("$ROOT/$loader" --library-path "$ROOT/usr/lib/$ma:$ROOT/lib/$ma" --list "$ROOT/usr/sbin/mysqld") ||
		die "the root's loader could not list mysqld's libraries: $out"
	while read -r line; do
		[[ $line == *" => "* ]] || continue
		lib=${line#* => }
		lib=${lib%% (*}
		[[ $lib == "$ROOT"/* && -e $lib ]] || die "mysqld needs '$line', which is not in $ROOT; rebuild with --rebuild"
		echo "$lib"
	done <<<"$out"
}

# copy_runtime DEST: what the server needs at run time, from the complete root into the new
# folder DEST: the wrapper and the loader's link, mysqld, the libraries the loader resolves for
# it (as their sonames), the English error messages and the character sets. No plugins: spindle's
# server loads none (caching_sha2_password is built in), and they are 42 MB. The copy is built
# beside DEST, proven to run (mysqld --version) and renamed.
copy_runtime() {
	local dest=${1%/} partial loader ma lib
	[[ $dest == /* ]] || die "--copy-to: give an absolute path (got '$dest')"
	[[ ! -e $dest ]] || die "--copy-to: '$dest' exists; give a new folder"
	partial=$dest.partial
	rm -rf "$partial"
	loader=$(tree_loader "$ROOT")
	ma=$(basename "$(dirname "$loader")")
	mkdir -p "$partial/usr/sbin" "$partial/usr/lib/$ma" "$partial/usr/share/mysql" "$partial/usr/lib/mysql/plugin"
	cp -a "$ROOT/spindle" "$partial/"
	cp -a "$ROOT/usr/sbin/mysqld" "$partial/usr/sbin/"
	cp -L "$ROOT/$loader" "$partial/$loader"
	for lib in $(runtime_libraries); do
		cp -L "$lib" "$partial/usr/lib/$ma/$(basename "$lib")"
	done
	cp -a "$ROOT/usr/share/mysql/english" "$ROOT/usr/share/mysql/charsets" "$partial/usr/share/mysql/"
	prove_runs "$partial/spindle/bin/mysqld"
	mv "$partial" "$dest"
	log "copied Oracle MySQL $(cat "$dest/spindle/version") to $dest ($(du -sh "$dest" | cut -f1))"
	echo "$dest/spindle/bin/mysqld"
}

main() {
	local mode=build
	ARCH=$(dpkg --print-architecture)
	while (($#)); do
		case $1 in
		--print-path) mode=print ;;
		--rebuild) mode=rebuild ;;
		--copy-to)
			(($# >= 2)) || { log "--copy-to needs a folder"; usage 2; }
			mode=copy
			COPY_TO=$2
			shift
			;;
		--arch)
			(($# >= 2)) || { log "--arch needs an architecture, e.g. --arch arm64"; usage 2; }
			ARCH=$2
			shift
			;;
		-h | --help) usage 0 ;;
		*) log "unknown argument: $1"; usage 2 ;;
		esac
		shift
	done
	[[ $ARCH =~ ^[a-z0-9]+$ ]] || die "--arch: '$ARCH' is not a Debian architecture (amd64, arm64, ...)"
	if [[ $ARCH != "$(dpkg --print-architecture)" && $mode != print ]]; then
		grep -qsx enabled "/proc/sys/fs/binfmt_misc/qemu-$(arch_qemu_name "$ARCH")" ||
			die "--arch $ARCH: this host cannot run $ARCH programs (binfmt_misc has no enabled qemu-$(arch_qemu_name "$ARCH")); install qemu-user-static and binfmt-support"
	fi
	check_cache_path
	ROOT=$CACHE/sid-$ARCH
	WRAPPER=$ROOT/spindle/bin/mysqld
	if [[ $mode == print ]]; then
		if ! root_is_complete || ! wrapper_is_current; then
			die "no complete MySQL root in $ROOT: build it with: sudo bash $0"
		fi
		echo "$WRAPPER"
		return
	fi
	if [[ $mode == copy ]] && root_is_complete && wrapper_is_current; then
		copy_runtime "$COPY_TO"
		return
	fi
	if [[ $mode == build ]] && root_is_complete && wrapper_is_current; then
		echo "$WRAPPER"
		return
	fi
	((EUID == 0)) || die "building the MySQL root needs root: sudo bash $0"
	mkdir -p "$CACHE"
	# One build at a time per root; a job that waited finds the other's root complete.
	exec 9>"$ROOT.lock"
	flock -w 1800 9 || die "another build of $ROOT holds $ROOT.lock for over 30 min; stop it, then rerun"
	if [[ $mode == rebuild ]] || ! root_is_complete; then
		build_root
	elif ! wrapper_is_current; then
		log "rewriting $WRAPPER (this script's wrapper changed)"
		write_wrapper "$ROOT"
		prove_runs "$WRAPPER"
	fi
	if [[ $mode == copy ]]; then
		copy_runtime "$COPY_TO"
		return
	fi
	echo "$WRAPPER"
}

main "$@"
