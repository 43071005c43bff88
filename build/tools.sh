#!/usr/bin/env bash
# Builds crane and registry from github.com/google/go-containerregistry at
# GGCR_VERSION (versions.env) through the Go module proxy, into the tools cache
# outside the repository, like test/tools/build.sh:
#
#   ${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}/<name>-<version>/<name>
#
# A binary that exists is not rebuilt. stdout: "<name> <version> <path>" per
# tool; stderr: progress. Usage: build/tools.sh [crane] [registry]
set -euo pipefail
exec 3>&1 1>&2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
: "${GGCR_VERSION:?GGCR_VERSION missing in versions.env}"
cache="${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}"
mkdir -p "$cache"

names=("$@")
[ "${#names[@]}" -gt 0 ] || names=(crane registry)

for name in "${names[@]}"; do
	case "$name" in
	crane | registry) ;;
	*) echo "tools.sh: unknown tool '$name' (crane, registry)" >&2; exit 1 ;;
	esac
	dir="$cache/$name-$GGCR_VERSION"
	if [ ! -x "$dir/$name" ]; then
		command -v go >/dev/null || { echo "tools.sh: go not found in PATH" >&2; exit 1; }
		(
			# One build at a time per tool; a second run waits, then finds the binary.
			if command -v flock >/dev/null; then exec 9>"$cache/.$name.lock" && flock 9; fi
			if [ ! -x "$dir/$name" ]; then
				echo "tools.sh: building $name $GGCR_VERSION" >&2
				tmp="$(mktemp -d "$cache/.$name.XXXXXX")"
				# Static, stripped, at the lowest CPU priority (the machine is shared with tests).
				GOWORK=off CGO_ENABLED=0 GOBIN="$tmp" nice -n 19 go install -trimpath -ldflags='-s -w' \
					"github.com/google/go-containerregistry/cmd/$name@$GGCR_VERSION"
				rm -rf "$dir" && mv "$tmp" "$dir"
			fi
		)
	fi
	printf '%s %s %s\n' "$name" "$GGCR_VERSION" "$dir/$name" >&3
done
