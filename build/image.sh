#!/usr/bin/env bash
# Assembles the banlieue container image as an OCI image archive, with no
# container daemon and no base image from a registry (docs/adr/0018):
#
#   build/image.sh <build-info file> <single executable> <out.oci.tar>
#
# The root filesystem is the Debian packages of the C/C++ runtime the node
# binary links (DEBIAN_PACKAGES in versions.env: `apt-get download`, cached
# outside the repository, then `dpkg-deb -x`), /etc/passwd and /etc/group with
# user nonroot (65532), an empty /tmp, and the single executable (build/binary.sh)
# at /usr/local/bin/banlieue, the entrypoint. No shell, no package manager.
#
# Reproducible: every entry's time is SOURCE_DATE_EPOCH (build-info), owners are
# numeric, entries sorted by name, gzip without name or time, and the OCI JSON
# (build/oci-layout.ts) is written in a fixed order; two builds of the same
# commit give the same digest (test/release/image-reproducible.test.ts).
set -euo pipefail
umask 022
info="$1"
binary="$2"
out="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
# shellcheck disable=SC1090
. "$info"
: "${VERSION:?}" "${COMMIT:?}" "${SOURCE_DATE_EPOCH:?}"
cache="${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}"
log() { printf 'image.sh: %s\n' "$*" >&2; }

# The .debs, keyed by the pinned list: a new pin is a new directory.
debs="$cache/debian-$DEBIAN_SUITE-$(printf '%s' "$DEBIAN_PACKAGES" | sha256sum | cut -c1-16)"
if [ ! -f "$debs/.complete" ]; then
	command -v apt-get >/dev/null || { log "apt-get is needed to fetch $DEBIAN_PACKAGES"; exit 1; }
	mkdir -p "$cache"
	tmp="$(mktemp -d "$cache/.debian.XXXXXX")"
	chmod 755 "$tmp" # apt's download sandbox user must write here
	log "apt-get download $DEBIAN_PACKAGES"
	# shellcheck disable=SC2086
	(cd "$tmp" && apt-get download -q $DEBIAN_PACKAGES >&2) || {
		# A fresh machine may have no package lists yet.
		[ "$(id -u)" = 0 ] && apt-get update -q >&2 && (cd "$tmp" && apt-get download -q $DEBIAN_PACKAGES >&2)
	} || { log "apt-get download failed: is a pinned version gone from Debian? (build/README.md)"; rm -rf "$tmp"; exit 1; }
	touch "$tmp/.complete"
	rm -rf "$debs" && mv "$tmp" "$debs"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
mkdir -p "$rootfs"
for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$rootfs"; done
mkdir -p "$rootfs/etc" "$rootfs/home" "$rootfs/tmp" "$rootfs/usr/local/bin" "$rootfs/usr/share/doc/banlieue" "$rootfs/usr/share/doc/nodejs"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
chmod 1777 "$rootfs/tmp"
install -m 0755 "$binary" "$rootfs/usr/local/bin/banlieue"
install -m 0644 "$here/../LICENSE" "$rootfs/usr/share/doc/banlieue/LICENSE"
install -m 0644 "$(dirname "$("$here/node.sh")")/LICENSE" "$rootfs/usr/share/doc/nodejs/LICENSE"

# One tar recipe for the layer and the archive (reproducible-builds.org/docs/archives).
reproducible_tar() { # <dir> <out> [owner]
	local dir="$1" file="$2" owner="${3:-0}"
	(cd "$dir" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort |
		tar --create --file="$file" --files-from=- --sort=name --mtime="@$SOURCE_DATE_EPOCH" \
			--owner="$owner" --group="$owner" --numeric-owner --format=posix \
			--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
}
reproducible_tar "$rootfs" "$work/layer.tar"
# nonroot's home, owned by it (the rest of the tree is root's).
mkdir -p "$work/home/home/nonroot"
chmod 0700 "$work/home/home/nonroot"
(cd "$work/home" && tar --append --file="$work/layer.tar" --no-recursion --mtime="@$SOURCE_DATE_EPOCH" \
	--owner=65532 --group=65532 --numeric-owner --format=posix \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime home/nonroot)
log "compressing the layer ($(du -m "$work/layer.tar" | cut -f1) MiB)"
gzip -n -6 <"$work/layer.tar" >"$work/layer.tar.gz"

mkdir -p "$work/layout"
(cd "$here/.." && npx --no-install tsx build/oci-layout.ts "$info" "$work/layer.tar" "$work/layer.tar.gz" "$work/layout")
mkdir -p "$(dirname "$out")"
reproducible_tar "$work/layout" "$work/image.oci.tar"
mv -f "$work/image.oci.tar" "$out"
log "wrote $out ($(du -m "$out" | cut -f1) MiB), manifest $(sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p' "$work/layout/index.json")"
