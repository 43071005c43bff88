#!/usr/bin/env bash
# What `make test` runs once the checks have passed: two lanes at the same
# time, because most of their time is spent waiting on the servers they start
# (vitest would run every suite one after another on a 2-core machine).
#   integration: the suites sharing one control plane, one file at a time;
#   rest:        unit, peers, package, contract e2e and release builds, then
#                the fault-injection run (test/faults, default seed).
# Each line is prefixed with its lane; the exit status is non-zero when
# either lane failed.
set -uo pipefail
cd "$(dirname "$0")/.."

lane() {
  local name="$1"
  shift
  "$@" 2>&1 | sed -u "s/^/[$name] /"
  return "${PIPESTATUS[0]}"
}

lane integration npx vitest run --project integration &
integration=$!
lane rest bash -c 'npx vitest run --project unit --project peers --project package --project contract --project release && npx tsx test/faults/run.ts' &
rest=$!

status=0
wait "$integration" || { status=1; echo "[integration] FAILED" >&2; }
wait "$rest" || { status=1; echo "[rest] FAILED" >&2; }
exit "$status"
