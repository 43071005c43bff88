#!/usr/bin/env bash
# What `make test` runs once the checks have passed: three lanes at the same
# time, because most of their time is spent waiting on the servers they start
# (vitest would run every suite one after another on a 2-core machine).
#   integration: the suites sharing one control plane, one file at a time;
#   contract:    the CAPI contract e2e, one file at a time (each starts its own
#                control plane, CAPI manager and peers), then the release
#                builds and the npm package (after: `make release` rewrites
#                the clusterctl assets the contract e2e reads, and both
#                rebuild lib/), then the hostile-input suite and the two
#                suites that delete CRDs (each with a control plane of its own);
#   rest:        unit and peers tests, a few integration
#                suites (with a control plane of their own), then the
#                fault-injection run (test/faults, default seed).
# Each line is prefixed with its lane and kept in target/test-logs/<lane>.log.
# The lanes' output interleaves, so a failed lane's failures are printed again
# at the very end, where a CI log's tail shows them. The exit status is
# non-zero when any lane failed.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=target/test-logs
mkdir -p "$logs"
# Plain text: the logs are read in files and CI pages, not terminals.
export NO_COLOR=1 FORCE_COLOR=0

lane() {
  local name="$1"
  shift
  "$@" 2>&1 | sed -u "s/^/[$name] /" | tee "$logs/$name.log"
  return "${PIPESTATUS[0]}"
}

# What failed in a lane: vitest's FAIL lines with the error under each (and
# the lines its message goes on with, but for a role's JSON log lines), and
# the fault run's verdict. At most 40 lines: a CI page shows a log's tail.
digest() {
  local name="$1"
  echo "[$name] FAILED; what failed (whole log: $logs/$name.log):"
  sed 's/\x1b\[[0-9;]*m//g' "$logs/$name.log" |
    awk '/ FAIL / { if (!seen[$0]++) { print; want = 1 }; more = 0; next }
         want && /(Error|expected|Timed out|timed out)/ { print; want = 0; more = 16; next }
         more > 0 && (/^\[[a-z]+\] *$/ || / ❯ /) { more = 0 }
         more > 0 { if ($0 !~ /^\[[a-z]+\] +\{/) { print; more-- }; next }
         /FAULTS_RESULT|problem: |did not complete|Tests .*failed|Test Files .*failed/ { print }' |
    cut -c1-240 | tail -n 40
}

# Integration suites the rest lane runs, so that the lanes take about as long
# as each other.
moved=(
  test/integration/controller-robustness.test.ts
  test/integration/vsphere-clone-concurrency.test.ts
  test/integration/bootstrap-operator.test.ts
  test/integration/proxmox-machines.test.ts
  test/integration/running-vms-stay.test.ts
  test/integration/vm-destruction-guards.test.ts
)

# And the ones the contract lane runs after its own.
after_contract=(
  test/integration/hostile-apply.test.ts
  test/integration/crd-deletion.test.ts
  test/integration/uninstall-crds.test.ts
)

lane integration npx vitest run --project integration "${moved[@]/#/--exclude=}" "${after_contract[@]/#/--exclude=}" &
pids=($!)
# Every step of a lane runs even when one before it failed: one CI run reports them all.
lane contract bash -c 'status=0
  npx vitest run --project contract || status=1
  npx vitest run --project release --project package || status=1
  npx vitest run --project integration "$@" || status=1
  exit $status' contract "${after_contract[@]}" &
pids+=($!)
lane rest bash -c 'status=0
  npx vitest run --project unit --project peers || status=1
  npx vitest run --project integration "$@" || status=1
  npx tsx test/faults/run.ts || status=1
  exit $status' rest "${moved[@]}" &
pids+=($!)

failed=()
names=(integration contract rest)
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
for name in "${failed[@]}"; do digest "$name" >&2; done
[ "${#failed[@]}" -eq 0 ]
