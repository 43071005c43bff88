// A failing VirtualMachine keeps to its backoff: events on other objects do not
// run it again at once. Here the API server refuses one VM's status writes (a
// ValidatingAdmissionPolicy) while a Provider of its namespace changes again
// and again, each change enqueueing every VM of the namespace; the
// controller's workqueue_retries_total tells how often the VM was retried.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { connection } from '../support/backend-samples.js';
import { CORE, TestApi, vm, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const ADMISSION = 'admissionregistration.k8s.io/v1';
const PROVIDER_CHANGES = 30;

describe('VirtualMachine retries (no retry storms)', () => {
  let ns: string;
  let removeNs: () => Promise<void>;
  let controller: RoleProcess | undefined;
  const victim = (): Obj => vm(ns, 'victim', 'no-such-class', 'no-such-image');
  const policy = (): Obj => ({
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: `refuse-status-${ns}` },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: ['banlieue.io'], apiVersions: ['v1alpha1'], operations: ['UPDATE'], resources: ['virtualmachines/status'] }],
      },
      validations: [
        {
          expression: `!(object.metadata.namespace == '${ns}' && object.metadata.name == 'victim')`,
          message: 'status writes of victim are refused by this test',
        },
      ],
    },
  });
  const binding = (): Obj => ({
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `refuse-status-${ns}` },
    spec: { policyName: `refuse-status-${ns}`, validationActions: ['Deny'] },
  });
  const provider = (): Obj => ({
    apiVersion: CORE,
    kind: 'Provider',
    metadata: { name: 'elsewhere', namespace: ns },
    spec: { providerClassRef: { name: 'vsphere' }, connection: connection('vsphere', 'creds') },
  });
  const retries = async (): Promise<number> => (controller ? controller.metric('workqueue_retries_total', { name: 'virtualmachine' }) : 0);

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('retry-backoff'));
    for (const obj of [policy(), binding(), provider(), victim()]) await t.apply(obj);
    // The policy is in force once a status write of victim is refused.
    await waitFor(
      'the API server to refuse status writes of victim',
      async () => {
        try {
          await t.applyStatus(victim(), { observedGeneration: 1 });
          return undefined;
        } catch {
          return true;
        }
      },
      60_000,
    );
    controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
  }, 180_000);

  afterAll(async () => {
    await controller?.stop();
    await t.delete(binding());
    await t.delete(policy());
    await removeNs?.();
  }, 120_000);

  it('is retried on its backoff, not at each event of another object of its namespace', async () => {
    // Its status (Scheduled=False ClassNotFound) cannot be written: the reconcile fails and is retried.
    await waitFor('victim to fail once', async () => ((await retries()) >= 1 ? true : undefined), 60_000);
    const before = await retries();
    for (let i = 0; i < PROVIDER_CHANGES; i++) {
      await t.patch(provider(), { metadata: { annotations: { 'banlieue.test/touch': String(i) } } });
    }
    const during = (await retries()) - before;
    console.log(`victim retried ${during} times while its Provider changed ${PROVIDER_CHANGES} times`);
    // Backoff from 1 s, doubling: a handful of retries however long the changes took, not one per change.
    expect(during).toBeLessThan(PROVIDER_CHANGES / 3);
    expect(controller?.logs()).toContain('Reconcile failed, retrying');
  });
});
