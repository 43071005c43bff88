#!/usr/bin/env bash
# Makes the single executable: the pinned Node.js (build/node.sh) with the
# bundle (build/bundle.ts) injected as a Node single-executable application
# (https://nodejs.org/api/single-executable-applications.html) by postject.
#
#   build/binary.sh <bundle.cjs> <out>
#
# Reproducible: the blob is made without a V8 snapshot or code cache (both
# depend on the machine), by the same Node that runs it, and postject writes
# the same bytes for the same inputs.
set -euo pipefail
bundle="$1"
out="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node_bin="$("$here/node.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$bundle" "$work/banlieue.cjs"
# Paths relative to $work: the blob records the path of "main", which must not
# depend on where the build ran.
cat >"$work/sea-config.json" <<JSON
{
  "main": "banlieue.cjs",
  "output": "banlieue.blob",
  "disableExperimentalSEAWarning": true,
  "useSnapshot": false,
  "useCodeCache": false
}
JSON
# The blob's format belongs to the Node version that runs it: make it with that one.
(cd "$work" && "$node_bin" --experimental-sea-config sea-config.json >&2)
cp "$node_bin" "$work/banlieue"
chmod 0755 "$work/banlieue"
# The fuse is Node's, fixed for every release (node/src/node_sea.cc).
(cd "$here/.." && npx --no-install postject "$work/banlieue" NODE_SEA_BLOB "$work/banlieue.blob" \
	--sentinel-fuse NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2) >&2
mkdir -p "$(dirname "$out")"
mv -f "$work/banlieue" "$out"
