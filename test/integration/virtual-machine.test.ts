// The VirtualMachine controller against the real API server: `banlieue
// controller` runs as a process; the test writes what users and providers
// write, and reads what they would see.
import { BACKENDS, type BackendName } from '../../infra/api/backends.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControllerNamespace } from '../support/kube.js';
import { TestApi, failureDomains, imageRows, machineRef, provider, runningStatus, vm, vmClass, vmImage } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';

describe('VirtualMachine controller', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;
  const suffix = Math.random().toString(36).slice(2, 7);
  const cls = `small-${suffix}`;
  const image = `ubuntu-${suffix}`;

  /** One Provider per backend, two failure domains each; the image ready on all of them. */
  beforeAll(async () => {
    ({ ns, stop: stopNamespace } = await startControllerNamespace('vm'));
    await t.apply(vmClass(cls));
    await t.apply(vmClass(`${cls}-secure`, { firmware: 'efi-secure' }));
    const img = await t.apply(vmImage(image));
    for (const backend of BACKENDS) {
      const p = await t.apply(provider(ns, backend, backend, { backend }));
      await t.applyStatus(
        p,
        failureDomains(backend, [
          { name: `${backend}-a`, labels: { zone: 'a' } },
          { name: `${backend}-b`, labels: { zone: 'b' } },
        ]),
      );
    }
    await t.applyStatus(img, imageRows(BACKENDS.map((b) => ({ ns, provider: b, ready: true }))));
  });

  afterAll(async () => {
    await stopNamespace?.();
    for (const name of [cls, `${cls}-secure`]) await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMClass', metadata: { name } });
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: image } });
  });

  const onBackend = (backend: BackendName, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    placement: { providerSelector: { matchLabels: { backend } } },
    ...extra,
  });

  it.each(BACKENDS)('places a VM on %s, writes the resolved infrastructure object and mirrors its status', async (backend) => {
    const v = await t.apply(vm(ns, `web-${backend}`, cls, image, onBackend(backend)));
    const scheduled = await t.condition(v, 'Scheduled', 'True', 'Scheduled');
    expect(scheduled.status?.scheduled).toMatchObject({ providerName: backend, providerClass: backend, failureDomain: `${backend}-a` });
    const machine = await t.exists(machineRef(backend, ns, v.metadata.name));
    expect(machine.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualMachine', name: v.metadata.name, controller: true })]);
    expect(machine.spec).toMatchObject({ providerRef: { name: backend }, failureDomain: `${backend}-a`, desiredPowerState: 'PoweredOn' });
    // What each backend's builder resolves here; a backend not listed is checked for the contract fields above only.
    const resolved: Partial<Record<BackendName, Record<string, unknown>>> = {
      vsphere: {
        datacenter: 'dc1',
        cluster: 'vsphere-a',
        datastore: 'fast-store',
        numCpus: 2,
        memoryMiB: 2048,
        template: 'ubuntu-24.04',
        network: [{ name: 'eth0', portGroup: 'lan-net' }],
      },
      proxmox: {
        node: 'proxmox-a',
        templateVmid: 9000,
        storage: 'fast-store',
        cores: 2,
        memoryMiB: 2048,
        osDiskSizeGiB: 20,
        nics: [expect.objectContaining({ name: 'eth0', bridge: 'lan-net' })],
      },
      libvirt: {
        domainName: `${ns}-web-libvirt`,
        pool: 'fast-store',
        vcpus: 2,
        bootSource: { kind: 'backingVolume', volume: 'ubuntu-24.04.qcow2' },
        disks: [expect.objectContaining({ name: 'os', sizeGiB: 20 })],
      },
      'cloud-hypervisor': {
        cpus: { boot: 2 },
        memory: { sizeMiB: 2048 },
        osDiskSizeGiB: 20,
        storageClass: 'fast',
        bootSource: { kind: 'image', image: 'ubuntu-24.04.raw' },
      },
    };
    expect(machine.spec).toMatchObject(resolved[backend] ?? {});
    expect(await t.get(v).then((o) => o?.status?.conditions?.find((c: { type: string }) => c.type === 'Ready'))).toMatchObject({
      status: 'False',
      reason: 'InfrastructureNotReady',
    });

    await t.applyStatus(machine, runningStatus('192.0.2.10'));
    const ready = await t.condition(v, 'Ready', 'True', 'Reconciled');
    expect(ready.status).toMatchObject({
      initialization: { provisioned: true },
      observedPowerState: 'PoweredOn',
      addresses: [{ type: 'InternalIP', address: '192.0.2.10' }],
      infrastructureRef: { apiGroup: 'infrastructure.banlieue.io', kind: machine.kind, name: v.metadata.name },
    });
    expect(ready.metadata.finalizers).toContain('banlieue.io/virtualmachine');
  });

  it.each([
    ['NoProviderMatched', () => vm(ns, 'nowhere', cls, image, { placement: { providerSelector: { matchLabels: { backend: 'hyperv' } } } })],
    [
      'NoFailureDomainMatched',
      () =>
        vm(
          ns,
          'no-fd',
          cls,
          image,
          onBackend('vsphere', {
            placement: { providerSelector: { matchLabels: { backend: 'vsphere' } }, failureDomainSelector: { matchLabels: { zone: 'z' } } },
          }),
        ),
    ],
    ['FirmwareUnsupported', () => vm(ns, 'secure', `${cls}-secure`, image, onBackend('vsphere'))],
    ['ClassNotFound', () => vm(ns, 'classless', 'no-such-class', image)],
    ['ImageNotFound', () => vm(ns, 'imageless', cls, 'no-such-image')],
  ])('marks Scheduled False with %s', async (reason, make) => {
    const v = await t.apply(make());
    const live = await t.condition(v, 'Scheduled', 'False', reason);
    expect(live.status?.conditions?.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'False' });
    expect(await t.get(machineRef('vsphere', ns, v.metadata.name))).toBeUndefined();
    // Users see it in `kubectl describe` too: a Warning Event with the same reason.
    await waitFor(`a ${reason} Event`, async () => {
      const events = await t.api.request<{ items: { reason: string; type: string; regarding: { name: string } }[] }>(
        'GET',
        `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
      );
      return events.items.some((e) => e.regarding.name === v.metadata.name && e.reason === reason && e.type === 'Warning') || undefined;
    });
  });

  it('marks Scheduled False with ImageNotReady while no Provider has the image', async () => {
    const pending = await t.apply(vmImage(`pending-${suffix}`));
    await t.applyStatus(pending, imageRows([{ ns, provider: 'vsphere', ready: false, reason: 'TemplateNotFound' }]));
    const v = await t.apply(vm(ns, 'waiting-image', cls, pending.metadata.name, onBackend('vsphere')));
    const live = await t.condition(v, 'Scheduled', 'False', 'ImageNotReady');
    expect(JSON.stringify(live.status?.conditions)).toContain('TemplateNotFound');
    // The image becomes ready: the watch on VMImage requeues the VM.
    await t.applyStatus(pending, imageRows([{ ns, provider: 'vsphere', ready: true }]));
    await t.condition(v, 'Scheduled', 'True');
    await t.delete(pending);
  });

  it('keeps VMs apart with required anti-affinity on a failure-domain label', async () => {
    const term = {
      placement: {
        providerSelector: { matchLabels: { backend: 'libvirt' } },
        antiAffinity: [{ topologyKey: 'zone', labelSelector: { matchLabels: { app: 'db' } }, mode: 'required' }],
      },
    };
    const first = await t.apply(vm(ns, 'db-1', cls, image, term, { app: 'db' }));
    const a = await t.condition(first, 'Scheduled', 'True');
    const second = await t.apply(vm(ns, 'db-2', cls, image, term, { app: 'db' }));
    const b = await t.condition(second, 'Scheduled', 'True');
    expect(new Set([a.status?.scheduled.failureDomain, b.status?.scheduled.failureDomain])).toEqual(new Set(['libvirt-a', 'libvirt-b']));
    const third = await t.apply(vm(ns, 'db-3', cls, image, term, { app: 'db' }));
    const refused = await t.condition(third, 'Scheduled', 'False', 'AntiAffinityUnsatisfied');
    expect(JSON.stringify(refused.status?.conditions)).toContain('zone');
  });

  it('keeps VMs apart even when they are created together and scheduled concurrently', async () => {
    const term = {
      placement: {
        providerSelector: { matchLabels: { backend: 'cloud-hypervisor' } },
        antiAffinity: [{ topologyKey: 'name', labelSelector: { matchLabels: { app: 'cache' } }, mode: 'required' }],
      },
    };
    const both = await Promise.all(['cache-1', 'cache-2'].map((name) => t.apply(vm(ns, name, cls, image, term, { app: 'cache' }))));
    const placed = await Promise.all(both.map((v) => t.condition(v, 'Scheduled', 'True')));
    expect(new Set(placed.map((p) => p.status?.scheduled.failureDomain))).toEqual(new Set(['cloud-hypervisor-a', 'cloud-hypervisor-b']));
  });

  it('renders user-data into a Secret the infrastructure object references', async () => {
    await t.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cloud-init', namespace: ns },
      stringData: { 'user-data': '#cloud-config\nhostname: ${VM_NAME}\nfqdn: ${FQDN}\nruncmd: [echo ${HOME}]\n' },
    });
    const v = await t.apply(
      vm(
        ns,
        'with-ud',
        cls,
        image,
        onBackend('proxmox', {
          userData: { secretRef: { name: 'cloud-init' } },
          networkOverrides: [{ name: 'eth0', static: { address: '192.0.2.50', prefix: 24, gateway: '192.0.2.1', domain: 'lab.example.com' } }],
        }),
      ),
    );
    const machine = await t.exists(machineRef('proxmox', ns, v.metadata.name));
    expect(machine.spec?.userDataSecretRef).toEqual({ name: 'with-ud-user-data', key: 'value' });
    expect(machine.spec?.nics[0].ipam).toEqual({ static: expect.objectContaining({ address: '192.0.2.50', prefix: 24 }) });
    const secret = await t.exists({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'with-ud-user-data', namespace: ns } });
    const rendered = Buffer.from(secret.data?.value ?? '', 'base64').toString();
    expect(rendered).toContain('hostname: "with-ud"\nfqdn: "with-ud.lab.example.com"\n');
    expect(rendered).toContain('echo ${HOME}');
    expect(secret.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualMachine', name: 'with-ud', controller: true })]);
  });

  it('refuses a static address another VM already holds with DuplicateAddress', async () => {
    const addr = { networkOverrides: [{ name: 'eth0', static: { address: '192.0.2.77', prefix: 24 } }] };
    const first = await t.apply(vm(ns, 'addr-1', cls, image, onBackend('vsphere', addr)));
    await t.condition(first, 'Scheduled', 'True');
    await waitFor('addr-1 to hold its address', async () => ((await t.get(first))?.status?.heldAddresses?.length ? true : undefined));
    const second = await t.apply(vm(ns, 'addr-2', cls, image, onBackend('vsphere', addr)));
    const refused = await t.condition(second, 'Ready', 'False', 'DuplicateAddress');
    expect(JSON.stringify(refused.status?.conditions)).toContain('192.0.2.77');
    expect(await t.get(machineRef('vsphere', ns, 'addr-2'))).toBeUndefined();
  });

  it('pauses and resumes: nothing changes while paused', async () => {
    const v = await t.apply(vm(ns, 'pausable', cls, image, onBackend('vsphere')));
    await t.exists(machineRef('vsphere', ns, v.metadata.name));
    await t.apply(vm(ns, 'pausable', cls, image, onBackend('vsphere', { paused: true })));
    await t.condition(v, 'Paused', 'True', 'Paused');
    await t.condition(v, 'Ready', 'False', 'Paused');
    const changed = await t.apply(vm(ns, 'pausable', cls, image, onBackend('vsphere', { paused: true, desiredPowerState: 'PoweredOff' })));
    // Paused=True is already there from the last generation: wait until the
    // controller has judged this one, or the check below runs before it looked.
    const generation = changed.metadata.generation;
    expect(generation).toBeGreaterThan(v.metadata.generation ?? 0);
    await waitFor(`Paused=True observed at generation ${generation}`, async () => {
      const paused = (await t.get(v))?.status?.conditions?.find((c: { type: string }) => c.type === 'Paused') as
        { status: string; observedGeneration?: number } | undefined;
      return paused?.status === 'True' && paused.observedGeneration === generation ? true : undefined;
    });
    expect((await t.get(machineRef('vsphere', ns, v.metadata.name)))?.spec?.desiredPowerState).toBe('PoweredOn');
    await t.apply(vm(ns, 'pausable', cls, image, onBackend('vsphere', { paused: false, desiredPowerState: 'PoweredOff' })));
    await t.condition(v, 'Paused', 'False', 'NotPaused');
    await t.exists(machineRef('vsphere', ns, v.metadata.name), (m) => m.spec?.desiredPowerState === 'PoweredOff');
  });

  it('waits for the infrastructure finalizer before releasing a deleted VM', async () => {
    const v = await t.apply(vm(ns, 'doomed', cls, image, onBackend('vsphere')));
    const machine = await t.exists(machineRef('vsphere', ns, v.metadata.name));
    // The provider's finalizer: the backend VM is not destroyed yet.
    await t.patch(machine, [{ op: 'add', path: '/metadata/finalizers', value: ['banlieue.io/vspheremachine'] }], 'application/json-patch+json');
    await t.delete(v);
    await t.exists(machine, (m) => !!m.metadata.deletionTimestamp);
    const held = await t.exists(v, (o) => !!o.metadata.deletionTimestamp);
    expect(held.metadata.finalizers).toContain('banlieue.io/virtualmachine');
    await t.patch(machine, [{ op: 'remove', path: '/metadata/finalizers/0' }], 'application/json-patch+json');
    await t.gone(machine);
    await t.gone(v);
  });
});
