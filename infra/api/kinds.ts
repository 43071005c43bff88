// Every kind banlieue serves, in install order (core kinds first). The
// infrastructure kinds come from the backend list (infra/api/backends.ts).
import { BACKEND_APIS } from './backends.js';
import { ProviderKind } from './banlieue.io/v1alpha1/provider.js';
import { VirtualMachineKind } from './banlieue.io/v1alpha1/virtual-machine.js';
import { VMClassKind } from './banlieue.io/v1alpha1/vm-class.js';
import { VMImageKind } from './banlieue.io/v1alpha1/vm-image.js';
import type { KindDefinition } from './kind.js';

export const CORE_KINDS = [VirtualMachineKind, ProviderKind, VMClassKind, VMImageKind] as const;

export const INFRA_MACHINE_KINDS: readonly KindDefinition[] = BACKEND_APIS.map((b) => b.machine);
export const INFRA_MACHINE_TEMPLATE_KINDS: readonly KindDefinition[] = BACKEND_APIS.map((b) => b.machineTemplate);
export const INFRA_CLUSTER_KINDS: readonly KindDefinition[] = BACKEND_APIS.map((b) => b.cluster);
export const INFRA_CLUSTER_TEMPLATE_KINDS: readonly KindDefinition[] = BACKEND_APIS.map((b) => b.clusterTemplate);

export const INFRA_KINDS: readonly KindDefinition[] = [
  ...INFRA_MACHINE_KINDS,
  ...INFRA_MACHINE_TEMPLATE_KINDS,
  ...INFRA_CLUSTER_KINDS,
  ...INFRA_CLUSTER_TEMPLATE_KINDS,
];

export const ALL_KINDS: readonly KindDefinition[] = [...CORE_KINDS, ...INFRA_KINDS];

export function kindByName(kind: string): KindDefinition {
  const def = ALL_KINDS.find((k) => k.kind === kind);
  if (!def) throw new Error(`unknown kind ${kind}`);
  return def;
}
