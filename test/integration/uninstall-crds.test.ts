// `banlieue uninstall --crds` on a control plane of its own (the suites' shared one keeps its
// CRDs): refused while an object of banlieue's kinds exists; with --force, banlieue's finalizer
// is taken off that object (put there by the test, as the controller would) and the CRDs go, the
// object with them, without waiting for a role that is no longer installed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS } from '../../infra/api/kinds.js';
import { crdName } from '../../infra/api/kind.js';
import { Finalizer } from '../../infra/api/well-known.js';
import { buildKubeTools, ControlPlane } from '../support/control-plane.js';
import { banlieueAsAdmin } from '../support/tenant.js';

let cp: ControlPlane;
const vm = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  metadata: { name: 'web-1', namespace: 'vms', finalizers: [Finalizer.virtualMachine] },
  spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' } },
};

beforeAll(async () => {
  cp = await ControlPlane.start(await buildKubeTools());
  const installed = await banlieueAsAdmin(['bootstrap', 'operator', '--wait=false'], cp.kubeconfigPath);
  expect(installed.code, installed.stderr).toBe(0);
  await cp.kubectl(['create', 'namespace', 'vms']);
  await cp.kubectl(['create', '-f', '-'], JSON.stringify(vm));
}, 180_000);

afterAll(async () => {
  await cp?.stop();
});

const crdsLeft = async (): Promise<string[]> =>
  (await cp.kubectl(['get', 'crd', '-o', 'name']))
    .split('\n')
    .filter((n) => ALL_KINDS.some((k) => n === `customresourcedefinition.apiextensions.k8s.io/${crdName(k)}`));

describe('banlieue uninstall --crds', () => {
  it('refuses while a VirtualMachine exists, naming it by kind, and deletes nothing', async () => {
    const result = await banlieueAsAdmin(['uninstall', '--crds'], cp.kubeconfigPath);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('error: refusing to delete the CRDs while objects of their kinds exist (1 VirtualMachine)');
    expect(await crdsLeft()).toHaveLength(ALL_KINDS.length);
    expect(await cp.kubectl(['get', 'deploy', '-n', 'banlieue-system', '-o', 'name'])).toContain('deployment.apps/banlieue-controller');
  });

  it("with --force takes banlieue's finalizer off the VirtualMachine, and the CRDs, the VM and the install go", async () => {
    const result = await banlieueAsAdmin(['uninstall', '--crds', '--force'], cp.kubeconfigPath);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`removed finalizer ${Finalizer.virtualMachine} from VirtualMachine vms/web-1: its backend VM, if any, is left as it is`);
    expect(result.stdout).toContain('deleted CustomResourceDefinition virtualmachines.banlieue.io');
    // The finalizer came off only once the Deployments were gone.
    const lines = result.stdout.split('\n');
    expect(lines.findIndex((l) => l.startsWith('removed finalizer'))).toBeGreaterThan(
      lines.findIndex((l) => l === 'deleted Deployment banlieue-system/banlieue-controller'),
    );
    // uninstall waited until they were gone.
    expect(await crdsLeft()).toEqual([]);
    expect(result.stdout).toContain('deleted Namespace banlieue-system');
    expect(await cp.kubectl(['get', 'namespace', '-o', 'name']), result.stdout).not.toContain('namespace/banlieue-system');
  });
});
