#!/usr/bin/env bash
# Checks that vendor/mysql_async is exactly the crates.io release 0.37.1 plus
# vendor/mysql_async-spindle.patch, so the vendored client cannot drift unseen.
#   bash scripts/check-vendor.sh
# The release comes from cargo's registry cache when it is there, else from crates.io; its
# sha256 is checked against the crates.io index. Files the vendored copy leaves out on purpose
# (the release's tests, CI and packaging files) are listed below; any other difference fails.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=mysql_async
VERSION=0.37.1
LEFT_OUT=(Cargo.lock README.tpl azure-pipelines.yml tests)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

crate="$work/$NAME-$VERSION.crate"
cached=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$NAME-$VERSION.crate" 2>/dev/null | head -n 1 || true)
if [ -n "$cached" ]; then
	cp "$cached" "$crate"
else
	curl -sSfL -o "$crate" "https://static.crates.io/crates/$NAME/$NAME-$VERSION.crate" ||
		{ echo "check-vendor: could not download $NAME $VERSION from crates.io (and it is not in cargo's cache)" >&2; exit 1; }
fi

# The index's checksum of the release (sparse index: my/sq/mysql_async, one JSON line per version).
want=$(curl -sSf "https://index.crates.io/my/sq/$NAME" |
	python3 -c "import json,sys
for l in sys.stdin:
    e=json.loads(l)
    if e['vers']=='$VERSION': print(e['cksum'])")
have=$(sha256sum "$crate" | cut -d' ' -f1)
if [ -z "$want" ] || [ "$want" != "$have" ]; then
	echo "check-vendor: $NAME-$VERSION.crate has sha256 $have, the crates.io index says '${want:-?}'" >&2
	exit 1
fi

tar xzf "$crate" -C "$work"
release="$work/$NAME-$VERSION"
(cd "$release" && patch -p1 -s --no-backup-if-mismatch) < vendor/mysql_async-spindle.patch ||
	{ echo "check-vendor: vendor/mysql_async-spindle.patch does not apply to the $VERSION release" >&2; exit 1; }
for f in "${LEFT_OUT[@]}"; do
	rm -rf "${release:?}/$f"
done
if ! diff -r "$release" vendor/mysql_async >"$work/diff"; then
	echo "check-vendor: vendor/mysql_async differs from $NAME $VERSION + vendor/mysql_async-spindle.patch:" >&2
	head -n 60 "$work/diff" >&2
	echo "(regenerate the patch with diff -ru against the release, or undo the change)" >&2
	exit 1
fi
echo "check-vendor: vendor/mysql_async is $NAME $VERSION (sha256 $have) + the spindle patch"
