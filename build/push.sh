#!/usr/bin/env bash
# Pushes the image archive to a registry with crane (build/tools.sh), under
# the reference given, and prints "<ref>@<digest>":
#
#   build/push.sh <image.oci.tar> <registry>/banlieue:<tag>
#
# crane reads registry credentials as docker does (~/.docker/config.json:
# `crane auth login`, or a credential helper). A reference on localhost or
# 127.0.0.1 is spoken to over plain http.
set -euo pipefail
archive="$1"
ref="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
crane="$("$here/tools.sh" crane | cut -d' ' -f3)"
layout="$(mktemp -d)"
trap 'rm -rf "$layout"' EXIT
tar -xf "$archive" -C "$layout"
"$crane" push "$layout" "$ref" >&2
printf '%s@%s\n' "$ref" "$("$crane" digest "$ref")"
