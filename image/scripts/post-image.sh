#!/bin/bash
# Post-image: lays the staged tree out as the SD-card image with genimage (no loop devices,
# no mounts), then compresses it and writes checksums.
# Usage: post-image.sh STAGING
set -euo pipefail
. "$(dirname "$0")/lib.sh"

STAGING=$1
GENIMAGE_TMP=$BUILD_DIR/genimage-tmp

write_genimage_config() {
	sed "s/@IMAGE_NAME@/$IMAGE_NAME/" "$BOARD_DIR/genimage.cfg" >"$BUILD_DIR/genimage.cfg"
}

run_genimage() {
	rm -rf "$GENIMAGE_TMP" "$OUT_DIR/$IMAGE_NAME.img"
	mkdir -p "$OUT_DIR" "$BUILD_DIR/genimage-input"
	genimage --config "$BUILD_DIR/genimage.cfg" --rootpath "$STAGING" --tmppath "$GENIMAGE_TMP" \
		--inputpath "$BUILD_DIR/genimage-input" --outputpath "$BUILD_DIR/genimage-out"
	mv "$BUILD_DIR/genimage-out/$IMAGE_NAME.img" "$OUT_DIR/$IMAGE_NAME.img"
	rm -rf "$GENIMAGE_TMP"
}

# SPINDLE_IMAGE_XZ=0 leaves the .img.xz out (image/ci.sh: the emulated test boots the .img, and
# xz of the 2 GiB image is 9-11 minutes of a 2-core CI machine).
compress_image() {
	rm -f "$OUT_DIR/$IMAGE_NAME.img.xz" "$OUT_DIR/$IMAGE_NAME.img.xz.sha256"
	[[ ${SPINDLE_IMAGE_XZ:-1} == 0 ]] && return
	xz -T0 -3 -k "$OUT_DIR/$IMAGE_NAME.img"
}

# A block map beside the image: `bmaptool copy` writes only the blocks that hold data and checks
# each range's checksum as it goes.
write_bmap() {
	rm -f "$OUT_DIR/$IMAGE_NAME.bmap"
	bmaptool -q create -o "$OUT_DIR/$IMAGE_NAME.bmap.tmp" "$OUT_DIR/$IMAGE_NAME.img"
	mv "$OUT_DIR/$IMAGE_NAME.bmap.tmp" "$OUT_DIR/$IMAGE_NAME.bmap"
}

write_checksums() {
	(cd "$OUT_DIR" && sha256sum "$IMAGE_NAME.img" >"$IMAGE_NAME.img.sha256")
	[[ -f $OUT_DIR/$IMAGE_NAME.img.xz ]] || return 0
	(cd "$OUT_DIR" && sha256sum "$IMAGE_NAME.img.xz" >"$IMAGE_NAME.img.xz.sha256")
}

main() {
	require_tools genimage mkdosfs mcopy mke2fs xz bmaptool
	local t=$SECONDS
	write_genimage_config
	run_genimage
	log "genimage: $((SECONDS - t)) s"
	t=$SECONDS
	write_bmap
	compress_image
	log "bmap, xz: $((SECONDS - t)) s"
	write_checksums
	log "image: $OUT_DIR/$IMAGE_NAME.img ($(du -h --apparent-size "$OUT_DIR/$IMAGE_NAME.img" | cut -f1) nominal," \
		"$(du -h "$OUT_DIR/$IMAGE_NAME.img" | cut -f1) allocated), .img.xz" \
		"$([[ -f $OUT_DIR/$IMAGE_NAME.img.xz ]] && du -h "$OUT_DIR/$IMAGE_NAME.img.xz" | cut -f1 || echo "not made (SPINDLE_IMAGE_XZ=0)")"
}

main "$@"
