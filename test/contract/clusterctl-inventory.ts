// What `clusterctl init` leaves in a management cluster that the local
// environment (CAPI installed from the module cache, banlieue from
// `clusterctl generate provider`) does not: CAPI's CRDs labelled as clusterctl
// components, and clusterctl's inventory of installed providers. `clusterctl
// move` needs both: it discovers the kinds to move from CRDs carrying the
// `clusterctl.cluster.x-k8s.io` label (banlieue's carry it from `generate
// provider`), and refuses a target that lacks a provider of the source.
import { join } from 'node:path';
import { stringify } from 'yaml';
import { buildTools } from '../support/control-plane.js';
import { BANLIEUE_TAG, type CapiEnvironment } from './capi-environment.js';

const CLUSTERCTL_LABEL = 'clusterctl.cluster.x-k8s.io';
const PROVIDER_LABEL = 'cluster.x-k8s.io/provider';
/** clusterctl's own CRD (the inventory): never a kind to move. */
const INVENTORY_CRD = 'providers.clusterctl.cluster.x-k8s.io';

/** An inventory entry as `clusterctl init` writes it (repository.Components.InventoryObject). */
function inventoryEntry(namespace: string, manifestLabel: string, providerName: string, type: string, version: string): Record<string, unknown> {
  return {
    apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
    kind: 'Provider',
    metadata: {
      name: manifestLabel,
      namespace,
      labels: { [CLUSTERCTL_LABEL]: '', [PROVIDER_LABEL]: manifestLabel, 'clusterctl.cluster.x-k8s.io/core': 'inventory' },
    },
    providerName,
    type,
    version,
  };
}

/** Labels CAPI's CRDs and records CAPI core and banlieue in clusterctl's inventory, as `clusterctl init` would have. */
export async function recordClusterctlInit(env: CapiEnvironment): Promise<void> {
  const tools = await buildTools();
  const crds = (await env.kubectl(['get', 'crd', '-o', 'name']))
    .split('\n')
    .map((l) => l.replace(/^customresourcedefinition\.apiextensions\.k8s\.io\//, '').trim());
  const capiCrds = crds.filter((name) => /(^|\.)cluster\.x-k8s\.io$/.test(name) && name !== INVENTORY_CRD);
  await env.kubectl(['label', '--overwrite', 'crd', ...capiCrds, `${CLUSTERCTL_LABEL}=`, `${PROVIDER_LABEL}=cluster-api`]);
  await env.kubectl(['apply', '--server-side', '-f', join(tools.capiModuleDir, 'cmd/clusterctl/config/manifest/clusterctl-api.yaml')]);
  await env.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${INVENTORY_CRD}`]);
  const entries = [
    inventoryEntry('capi-system', 'cluster-api', 'cluster-api', 'CoreProvider', tools.versions['capi-manager'] ?? env.versions.capi),
    inventoryEntry('banlieue-system', 'infrastructure-banlieue', 'banlieue', 'InfrastructureProvider', BANLIEUE_TAG),
  ];
  await env.kubectl(['apply', '--server-side', '-f', '-'], entries.map((e) => stringify(e)).join('---\n'));
}
