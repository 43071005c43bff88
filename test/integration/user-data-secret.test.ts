// No takeover, against the real API server with `banlieue controller` running:
// the Secret `<vm>-user-data` and the infrastructure machine of the VM's name
// are written only while they are the VM's. Someone else's object of that name
// is left byte for byte as it was, and the VM says why in a condition; the VM's
// own Secret follows its user-data source.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransientError } from '../../controller/runtime/errors.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { createNamespace, startControllerNamespace } from '../support/kube.js';
import { TestApi, failureDomains, imageRows, machineRef, provider, vm, vmClass, vmImage, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';

interface Secret extends Obj {
  type?: string;
  metadata: Obj['metadata'] & {
    resourceVersion?: string;
    ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[];
    managedFields?: { manager: string; operation: string; fieldsV1?: Record<string, unknown> }[];
  };
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const TLS_KEY = b64('-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----\n');
const TLS_CRT = b64('-----BEGIN CERTIFICATE-----\nnot-a-real-cert\n-----END CERTIFICATE-----\n');

describe('VirtualMachine objects in a user namespace', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;
  const suffix = Math.random().toString(36).slice(2, 7);
  const cls = `small-${suffix}`;
  const image = `ubuntu-${suffix}`;

  beforeAll(async () => {
    ({ ns, stop: stopNamespace } = await startControllerNamespace('user-data'));
    await t.apply(vmClass(cls));
    const img = await t.apply(vmImage(image));
    const p = await t.apply(provider(ns, 'vsphere', 'vsphere'));
    await t.applyStatus(p, failureDomains('vsphere', [{ name: 'vsphere-a' }]));
    await t.applyStatus(img, imageRows([{ ns, provider: 'vsphere', ready: true }]));
  });

  afterAll(async () => {
    await stopNamespace?.();
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMClass', metadata: { name: cls } });
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: image } });
  });

  const secretRef = (name: string): Pick<Obj, 'apiVersion' | 'kind' | 'metadata'> => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns } });
  const readSecret = async (name: string): Promise<Secret | undefined> => (await t.get(secretRef(name))) as Secret | undefined;

  /** A Secret as `kubectl create secret` makes it: a POST with that field manager. */
  const createSecret = (body: Omit<Secret, 'apiVersion' | 'kind'>): Promise<Secret> =>
    t.api.request<Secret>('POST', `/api/v1/namespaces/${ns}/secrets`, {
      query: { fieldManager: 'kubectl-create' },
      body: { apiVersion: 'v1', kind: 'Secret', ...body },
    });

  const userDataSource = (name: string, data: Record<string, string>): Promise<Obj> =>
    t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, stringData: data });

  const machinesReferring = async (secretName: string): Promise<string[]> => {
    const list = await t.api.request<{ items: Obj[] }>('GET', `/apis/infrastructure.banlieue.io/v1alpha1/namespaces/${ns}/vspheremachines`);
    return list.items.filter((m) => m.spec?.userDataSecretRef?.name === secretName).map((m) => m.metadata.name);
  };

  const scheduledMessage = async (v: Obj): Promise<string> =>
    ((await t.get(v))?.status?.conditions as { type: string; message: string }[] | undefined)?.find((c) => c.type === 'Scheduled')?.message ?? '';

  // Opaque as `kubectl create secret generic --from-file=tls.key` makes it; typed as cert-manager does.
  it.each([
    ['an Opaque', 'web-key', 'Opaque'],
    ['a kubernetes.io/tls', 'web-tls', 'kubernetes.io/tls'],
  ])('leaves %s Secret named <vm>-user-data untouched and marks the VM Scheduled False with UserDataSecretConflict', async (_, name, type) => {
    const secretName = `${name}-user-data`;
    const before = await createSecret({
      metadata: { name: secretName, namespace: ns, labels: { app: 'ingress' } },
      type,
      data: { 'tls.key': TLS_KEY, 'tls.crt': TLS_CRT },
    });
    await userDataSource(`${name}-source`, { 'user-data': '#!/bin/sh\necho ${VM_NAME}\n' });
    const spec = { userData: { secretRef: { name: `${name}-source` } } };
    const v = await t.apply(vm(ns, name, cls, image, spec));

    const live = await t.condition(v, 'Scheduled', 'False', 'UserDataSecretConflict');
    const message = await scheduledMessage(live);
    expect(message).toContain(
      `Secret ${secretName} exists and is not this VirtualMachine's rendered user-data (its type is ${type}, not banlieue.io/user-data)`,
    );
    expect(message).not.toContain(TLS_KEY);
    expect(live.status?.conditions?.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'False' });
    await waitFor('a UserDataSecretConflict Event', async () => {
      const events = await t.api.request<{ items: { reason: string; type: string; regarding: { name: string } }[] }>(
        'GET',
        `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
      );
      return events.items.some((e) => e.regarding.name === name && e.reason === 'UserDataSecretConflict' && e.type === 'Warning') || undefined;
    });

    const after = await readSecret(secretName);
    expect(after?.type).toBe(type);
    expect(after?.data).toEqual(before.data);
    expect(after?.metadata.labels).toEqual(before.metadata.labels);
    expect(after?.metadata.ownerReferences).toEqual(before.metadata.ownerReferences);
    expect(after?.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(await t.get(machineRef('vsphere', ns, name))).toBeUndefined();
    expect(await machinesReferring(secretName)).toEqual([]);

    // Its owner moves it away; the VM's next pass renders its own.
    await t.delete(secretRef(secretName));
    await t.apply(vm(ns, name, cls, image, spec, { retry: '1' }));
    await t.condition(v, 'Scheduled', 'True', 'Scheduled');
    const own = await t.exists(secretRef(secretName));
    expect((own as Secret).type).toBe('banlieue.io/user-data');
    expect(await machinesReferring(secretName)).toEqual([name]);
  });

  it('updates its own user-data Secret, without replacing it, when the VM names another user-data source', async () => {
    await userDataSource('web-ud-source', { v1: '#!/bin/sh\necho one ${VM_NAME}\n', v2: '#!/bin/sh\necho two ${VM_NAME}\n' });
    const spec = (key: string): Record<string, unknown> => ({ userData: { secretRef: { name: 'web-ud-source', key } } });
    const v = await t.apply(vm(ns, 'web-ud', cls, image, spec('v1')));
    await t.condition(v, 'Scheduled', 'True', 'Scheduled');
    const first = (await t.exists(secretRef('web-ud-user-data'))) as Secret;
    expect(first.type).toBe('banlieue.io/user-data');
    expect(Buffer.from(first.data?.value ?? '', 'base64').toString()).toBe('#!/bin/sh\necho one web-ud\n');
    const live = await t.get(v);
    expect(first.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'VirtualMachine', name: 'web-ud', uid: live?.metadata.uid, controller: true }),
    ]);
    expect(first.metadata.labels).toEqual({ 'banlieue.io/owned-by': 'web-ud' });
    expect(await machinesReferring('web-ud-user-data')).toEqual(['web-ud']);

    await t.apply(vm(ns, 'web-ud', cls, image, spec('v2')));
    const second = (await t.exists(
      secretRef('web-ud-user-data'),
      (s) => Buffer.from(s.data?.value ?? '', 'base64').toString() === '#!/bin/sh\necho two web-ud\n',
    )) as Secret;
    expect(second.metadata.uid).toBe(first.metadata.uid);
    // Our apply (not a forced one, not another manager) owns the value now.
    const owners = (second.metadata.managedFields ?? []).filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes('"f:value"'));
    expect(owners.map((f) => [f.manager, f.operation])).toEqual([['banlieue.io/controller', 'Apply']]);
    // Still placed where it was: the message names its place first, then why.
    expect(await scheduledMessage(v)).toMatch(/^vsphere\/vsphere-a(:|$)/);
  });

  it('reports UserDataSecretConflict instead of overwriting a value another writer set in its own Secret', async () => {
    await userDataSource('web-edit-source', { v1: '#!/bin/sh\necho one\n', v2: '#!/bin/sh\necho two\n' });
    const spec = (key: string): Record<string, unknown> => ({ userData: { secretRef: { name: 'web-edit-source', key } } });
    const v = await t.apply(vm(ns, 'web-edit', cls, image, spec('v1')));
    // The machine is written after the Secret: the controller is done with the Secret.
    await t.exists(machineRef('vsphere', ns, 'web-edit'));
    // `kubectl edit` of the value.
    await t.api.request('PATCH', `/api/v1/namespaces/${ns}/secrets/web-edit-user-data`, {
      query: { fieldManager: 'kubectl-edit' },
      body: { data: { value: b64('edited by hand') } },
      contentType: 'application/merge-patch+json',
    });
    const edited = await readSecret('web-edit-user-data');

    await t.apply(vm(ns, 'web-edit', cls, image, spec('v2')));
    const live = await t.condition(v, 'Scheduled', 'False', 'UserDataSecretConflict');
    const message = await scheduledMessage(live);
    expect(message).toContain('kubectl-edit');
    expect(message).toContain('.data.value');
    expect(message).not.toContain(b64('edited by hand'));
    const after = await readSecret('web-edit-user-data');
    expect(after?.data).toEqual(edited?.data);
    // Nothing but our own create's fields handed to our apply (managedFields) was written.
    const { resourceVersion: _rv, managedFields: afterFields, ...afterMeta } = after?.metadata ?? {};
    const { resourceVersion: _erv, managedFields: _editedFields, ...editedMeta } = edited?.metadata ?? {};
    expect(afterMeta).toEqual(editedMeta);
    expect(after?.type).toBe(edited?.type);
    const valueOwners = (afterFields ?? []).filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes('"f:value"'));
    expect(valueOwners.map((f) => f.manager)).toEqual(['kubectl-edit']);
  });

  it('leaves an infrastructure machine of its name it does not control untouched, also when the VM is deleted', async () => {
    const machine = machineRef('vsphere', ns, 'web-taken');
    const before = await t.api.request<Obj & { metadata: { resourceVersion: string } }>(
      'POST',
      `/apis/infrastructure.banlieue.io/v1alpha1/namespaces/${ns}/vspheremachines`,
      {
        query: { fieldManager: 'someone-else' },
        body: {
          ...machine,
          metadata: { ...machine.metadata, labels: { team: 'b' } },
          spec: {
            providerRef: { name: 'vsphere' },
            failureDomain: 'vsphere-a',
            datacenter: 'dc1',
            template: 'their-template',
            numCpus: 8,
            memoryMiB: 8192,
            network: [{ name: 'eth0', portGroup: 'their-net' }],
          },
        },
      },
    );
    const v = await t.apply(vm(ns, 'web-taken', cls, image));
    const live = await t.condition(v, 'Scheduled', 'False', 'InfraMachineConflict');
    expect(await scheduledMessage(live)).toContain('VSphereMachine web-taken exists and is not controlled by this VirtualMachine (it has no controller)');
    expect(live.status?.infrastructureRef).toBeUndefined();
    const after = await t.get(machine);
    expect(after?.metadata.ownerReferences).toBeUndefined();
    expect((after?.metadata as { resourceVersion?: string }).resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after?.spec).toEqual(before.spec);

    await t.delete(v);
    await t.gone(v);
    expect((await t.get(machine))?.metadata.uid).toBe(before.metadata.uid);
  });
});

describe('Create-if-absent and owned updates (how the controller writes into user namespaces)', () => {
  const t = new TestApi();
  const ssa = new ServerSideApply(t.api, 'banlieue.io/controller');
  let ns: string;
  let removeNs: () => Promise<void>;

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('owned-writes'));
  });

  afterAll(async () => {
    await removeNs?.();
  });

  const configMap = (name: string, data: Record<string, string>, uid?: string): Obj & { metadata: { uid?: string } } => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, ...(uid ? { uid } : {}) },
    data,
  });

  it('returns what already has the name, untouched, instead of creating', async () => {
    const theirs = await t.api.request<Obj & { metadata: { resourceVersion: string } }>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: configMap('taken', { a: 'theirs' }),
    });
    const result = await ssa.create(configMap('taken', { a: 'ours' }));
    expect(result.created).toBe(false);
    const live = await t.get(configMap('taken', {}));
    expect(live?.data).toEqual({ a: 'theirs' });
    expect((live?.metadata as { resourceVersion?: string }).resourceVersion).toBe(theirs.metadata.resourceVersion);
  });

  it('creates with its fields under our apply, so an unforced update of a changed value goes through', async () => {
    const created = await ssa.create(configMap('ours', { a: '1' }));
    if (!created.created) throw new Error('expected a create');
    const uid = (await t.get(configMap('ours', {})))?.metadata.uid ?? '';
    const updated = await ssa.update({ ...configMap('ours', { a: '2' }), metadata: { name: 'ours', namespace: ns, uid } });
    expect(updated.applied).toBe(true);
    expect((await t.get(configMap('ours', {})))?.data).toEqual({ a: '2' });
  });

  it('drops on update a field its create wrote and the update no longer sets', async () => {
    const created = await ssa.create(configMap('dropped', { a: '1', b: '2' }));
    if (!created.created) throw new Error('expected a create');
    const uid = (await t.get(configMap('dropped', {})))?.metadata.uid ?? '';
    const updated = await ssa.update({ ...configMap('dropped', { a: '1' }), metadata: { name: 'dropped', namespace: ns, uid } });
    expect(updated.applied).toBe(true);
    expect((await t.get(configMap('dropped', {})))?.data).toEqual({ a: '1' });
  });

  it('hands over a create entry left by an interrupted create, then updates', async () => {
    // A plain POST as ours: the hand-over never happened.
    const posted = await t.api.request<Obj>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      query: { fieldManager: 'banlieue.io/controller' },
      body: configMap('interrupted', { a: '1' }),
    });
    const updated = await ssa.update({
      ...configMap('interrupted', { a: '2' }),
      metadata: { name: 'interrupted', namespace: ns, uid: posted.metadata.uid ?? '' },
    });
    expect(updated.applied).toBe(true);
    expect((await t.get(configMap('interrupted', {})))?.data).toEqual({ a: '2' });
  });

  it('never writes an object of another uid, nor creates a deleted one: both are a TransientError', async () => {
    await ssa.create(configMap('replaced', { a: '1' }));
    const other = { name: 'replaced', namespace: ns, uid: '00000000-0000-0000-0000-000000000000' };
    await expect(ssa.update({ ...configMap('replaced', { a: '2' }), metadata: other })).rejects.toBeInstanceOf(TransientError);
    expect((await t.get(configMap('replaced', {})))?.data).toEqual({ a: '1' });
    await expect(ssa.update({ ...configMap('deleted', { a: '2' }), metadata: { ...other, name: 'deleted' } })).rejects.toBeInstanceOf(TransientError);
    expect(await t.get(configMap('deleted', {}))).toBeUndefined();
  });
});
