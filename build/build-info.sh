#!/usr/bin/env bash
# Writes what a release build is made from, "KEY=value" lines, to $1, and
# touches the file only when that changed (make rebuilds what depends on it):
#   VERSION=0.1.0                      package.json
#   COMMIT=<sha>[-dirty]               git HEAD; -dirty when tracked files differ
#   SOURCE_DATE_EPOCH=<seconds>        the commit's time (reproducible-builds.org),
#                                      unless SOURCE_DATE_EPOCH is set already
set -euo pipefail
out="$1"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version="$(node -p "require('./package.json').version")"
if commit="$(git rev-parse HEAD 2>/dev/null)"; then
	# Stat information first: a file rewritten with the same content (make synth) is not a change.
	git update-index -q --refresh >/dev/null 2>&1 || true
	git diff-index --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
	epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
else
	commit=unknown
	epoch="${SOURCE_DATE_EPOCH:-0}"
fi
info="$(printf 'VERSION=%s\nCOMMIT=%s\nSOURCE_DATE_EPOCH=%s\n' "$version" "$commit" "$epoch")"
mkdir -p "$(dirname "$out")"
[ -f "$out" ] && [ "$(cat "$out")" = "$info" ] || printf '%s\n' "$info" >"$out"
