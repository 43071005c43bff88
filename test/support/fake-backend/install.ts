// The fake backend's kinds in a test's control plane: its CRDs, and its name
// added to the built-in CRDs' enums of backend names, as a release adding a
// backend would (docs/adr/0014).
import { toCustomResourceDefinition } from '../../../infra/crds/custom-resource-definition.js';
import type { ControlPlane } from '../control-plane.js';
import { applyObjects } from '../private-plane-fixtures.js';
import { FakeClusterKind, FakeMachineKind } from './fake-machine.js';

/** Add `name` beside `vsphere` to every enum of backend names in `crd`. */
async function allowBackendName(cp: ControlPlane, crd: string, name: string): Promise<void> {
  const object = JSON.parse(await cp.kubectl(['get', 'crd', crd, '-o', 'json'])) as object;
  const widen = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(widen);
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const values = record.enum;
    if (Array.isArray(values) && values.includes('vsphere') && !values.includes(name)) values.push(name);
    Object.values(record).forEach(widen);
  };
  widen(object);
  await cp.kubectl(['replace', '-f', '-'], JSON.stringify(object));
}

/** FakeMachine and FakeCluster established, and `fake` a backend name Providers, VMImages and VirtualMachines accept. */
export async function installFakeBackend(cp: ControlPlane): Promise<void> {
  await applyObjects(cp, [toCustomResourceDefinition(FakeMachineKind), toCustomResourceDefinition(FakeClusterKind)]);
  for (const crd of ['providers.banlieue.io', 'vmimages.banlieue.io', 'virtualmachines.banlieue.io']) await allowBackendName(cp, crd, 'fake');
  await cp.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    'fakemachines.infrastructure.banlieue.io',
    'fakeclusters.infrastructure.banlieue.io',
  ]);
}
