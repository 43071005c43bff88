#!/usr/bin/env bash
# `make kind-e2e-capi`: the CAPI contract e2e on a kind cluster, for machines
# with Docker. CAPI is installed by `clusterctl init` at the pinned version and
# banlieue from a local clusterctl repository; the test code is the one
# `make e2e-capi` runs, with E2E_CAPI_ENV=kind. KEEP=1 keeps the cluster.
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/tools/versions.env
: "${CAPI_VERSION:?}"
command -v kind >/dev/null || { echo "kind-e2e-capi: kind is required (and Docker)" >&2; exit 1; }
command -v docker >/dev/null || { echo "kind-e2e-capi: docker is required" >&2; exit 1; }

while read -r name _ path; do
  declare "$(echo "$name" | tr 'a-z-' 'A-Z_')=$path"
done < <(test/tools/build.sh)
export PATH="$(dirname "$CLUSTERCTL"):$(dirname "$KUBECTL"):$PATH"
version="v$(node -p "require('./package.json').version")"
cluster="${KIND_CLUSTER:-banlieue-capi}"
work="$(mktemp -d)"
trap '[ "${KEEP:-0}" = 1 ] || kind delete cluster --name "$cluster"; rm -rf "$work"' EXIT

repo="$work/repository/infrastructure-banlieue/$version"
mkdir -p "$repo"
cp target/clusterctl/release/infrastructure-components.yaml target/clusterctl/release/metadata.yaml "$repo/"
cat > "$work/clusterctl.yaml" <<YAML
providers:
  - name: banlieue
    type: InfrastructureProvider
    url: file://$repo/infrastructure-components.yaml
YAML

kind create cluster --name "$cluster" --kubeconfig "$work/kubeconfig"
export KUBECONFIG="$work/kubeconfig"
# ClusterClass (capi-clusterclass.test.ts): clusterctl turns on CAPI's ClusterTopology feature gate from this variable.
CLUSTER_TOPOLOGY=true clusterctl init --config "$work/clusterctl.yaml" \
  --core "cluster-api:$CAPI_VERSION" --bootstrap "kubeadm:$CAPI_VERSION" --control-plane "kubeadm:$CAPI_VERSION" \
  --infrastructure "banlieue:$version" --wait-providers
kubectl -n capi-system rollout status deploy/capi-controller-manager --timeout=5m
E2E_CAPI_ENV=kind npx vitest run --project contract
