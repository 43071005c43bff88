// What two objects may not share on one backend, through the real
// kube-apiserver and the generic provider role (the test-only fake
// backend). Two interfaces of one machine with one MAC are refused at
// admission; two machines fixing one MAC on one endpoint (one Provider, or two
// Providers spelling one endpoint differently, in other namespaces) leave the
// later one Ready=False MacAddressInUse with no VM, until the MAC is free, and
// a holder in another namespace goes unnamed; the later of two Providers
// naming one endpoint says so with EndpointShared, naming the other only
// when it is of its own namespace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../support/control-plane.js';
import { FakeCloud } from '../support/fake-backend/fake-cloud.js';
import { fakeDescriptor } from '../support/fake-backend/descriptor.js';
import { runFakeRoles } from '../support/fake-backend/roles.js';
import { FakeMachineKind } from '../support/fake-backend/fake-machine.js';
import { installFakeBackend } from '../support/fake-backend/install.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { waitFor } from '../support/wait.js';

const MACHINES = 'fakemachines.infrastructure.banlieue.io';
const PROVIDERS = 'providers.banlieue.io';
const MAC = '02:00:00:0a:0b:0c';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message?: string;
}
interface Live {
  metadata: { name?: string };
  status?: { initialization?: { provisioned?: boolean }; conditions?: Condition[]; failureDomains?: unknown[] };
}

async function get(cp: ControlPlane, resource: string, ns: string, name: string): Promise<Live | undefined> {
  try {
    return JSON.parse(await cp.kubectl(['get', resource, name, '-n', ns, '-o', 'json'])) as Live;
  } catch {
    return undefined;
  }
}

const conditionOf = (live: Live | undefined, type: string): Condition | undefined => live?.status?.conditions?.find((c) => c.type === type);

/** The Warning Events about one object, as `reason: message`. */
async function warnings(cp: ControlPlane, ns: string, name: string): Promise<string[]> {
  const list = JSON.parse(await cp.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name},type=Warning`, '-o', 'json'])) as {
    items: { reason: string; message: string }[];
  };
  return list.items.map((e) => `${e.reason}: ${e.message}`);
}

/** The apiserver's refusal of `object`, or undefined when it accepted it. */
async function refusal(cp: ControlPlane, object: object): Promise<string | undefined> {
  try {
    await cp.kubectl(['create', '-f', '-'], JSON.stringify(object));
    return undefined;
  } catch (err) {
    return String(err);
  }
}

const provider = (ns: string, name: string, endpoint: string): object => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name, namespace: ns },
  spec: { providerClassRef: { name: 'fake' }, connection: { endpoint, credentialsRef: { name: 'fake-creds' } } },
});

const machine = (ns: string, name: string, providerName: string, network: object[]): object => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: FakeMachineKind.kind,
  metadata: { name, namespace: ns },
  spec: { image: 'debian-13', cpus: 1, memoryMiB: 512, desiredPowerState: 'PoweredOff', providerRef: { name: providerName }, network },
});

describe('one backend endpoint, shared by nothing that must be unique', () => {
  const { plane } = usePrivatePlane();
  const cloud = new FakeCloud(300);
  let stopRoles: () => Promise<void>;

  /** A namespace with the credentials and one Provider on `endpoint`, its failure domain published. */
  async function tenant(ns: string, providerName: string, endpoint: string): Promise<void> {
    const cp = plane();
    await cp.kubectl(['create', 'namespace', ns]);
    await applyObjects(cp, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fake-creds', namespace: ns }, stringData: { token: 's3cr3t' } },
      provider(ns, providerName, endpoint),
    ]);
    await waitFor(
      `Provider ${ns}/${providerName} to publish its failure domain`,
      async () => (await get(cp, PROVIDERS, ns, providerName))?.status?.failureDomains?.length === 1,
      60_000,
    );
  }

  const untilProvisioned = (ns: string, name: string): Promise<true> =>
    waitFor(
      `${name} to be provisioned`,
      async () => (await get(plane(), MACHINES, ns, name))?.status?.initialization?.provisioned === true || undefined,
      120_000,
    );

  const vmNamed = (name: string): boolean => [...cloud.vms.values()].some((vm) => vm.name === name);

  beforeAll(async () => {
    const cp = plane();
    await installFakeBackend(cp);
    stopRoles = runFakeRoles(cp.kubeconfigPath, fakeDescriptor(cloud), { controller: false, taskPollMs: 250 });
    // The same endpoint, spelled twice, in two namespaces: `east` first.
    await tenant('macs-a', 'east', 'https://east.fake.invalid/api');
    await tenant('macs-b', 'east-again', 'HTTPS://East.Fake.Invalid:443/api/');
  }, 240_000);

  afterAll(() => stopRoles());

  it('refuses two interfaces of one machine with one MAC, whatever the case, naming the field', async () => {
    const twoNics = [
      { name: 'eth0', macAddress: MAC },
      { name: 'eth1', macAddress: MAC.toUpperCase() },
    ];
    const message = await refusal(plane(), machine('macs-a', 'twins', 'east', twoNics));
    expect(message).toContain('spec.network: Invalid value');
    expect(message).toContain('two interfaces in spec.network have the same macAddress');
  });

  it('refuses it on every machine kind that fixes MACs', async () => {
    const infra = 'infrastructure.banlieue.io/v1alpha1';
    const twice = (nic: Record<string, unknown>): object[] => [
      { ...nic, name: 'eth0', macAddress: MAC },
      { ...nic, name: 'eth1', macAddress: MAC },
    ];
    const kinds: [string, object][] = [
      [
        'spec.network',
        {
          apiVersion: infra,
          kind: 'VSphereMachine',
          metadata: { name: 'vsm', namespace: 'macs-a' },
          spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048, network: twice({ portGroup: 'VM Network' }) },
        },
      ],
      [
        'spec.nics',
        {
          apiVersion: infra,
          kind: 'ProxmoxMachine',
          metadata: { name: 'pvem', namespace: 'macs-a' },
          spec: { templateVmid: 9000, cores: 2, memoryMiB: 2048, osDiskSizeGiB: 20, nics: twice({ bridge: 'vmbr0' }) },
        },
      ],
      [
        'spec.network',
        {
          apiVersion: infra,
          kind: 'LibvirtMachine',
          metadata: { name: 'lvm', namespace: 'macs-a' },
          spec: {
            pool: 'default',
            bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' },
            vcpus: 2,
            memoryMiB: 2048,
            disks: [{ name: 'os', sizeGiB: 20 }],
            network: twice({ source: { kind: 'bridge', name: 'br0' } }),
          },
        },
      ],
      [
        'spec.nics',
        {
          apiVersion: infra,
          kind: 'CloudHypervisorMachine',
          metadata: { name: 'chm', namespace: 'macs-a' },
          spec: {
            bootSource: { kind: 'image', image: 'ubuntu.raw' },
            cpus: { boot: 2 },
            memory: { sizeMiB: 2048 },
            osDiskSizeGiB: 20,
            storageClass: 'local',
            nics: twice({ networkClass: 'lan' }),
          },
        },
      ],
    ];
    for (const [field, object] of kinds) {
      expect(await refusal(plane(), object), JSON.stringify(object)).toContain(`two interfaces in ${field} have the same macAddress`);
    }
  });

  it('says on the later of two Providers naming one endpoint that it is shared, with a Warning Event; the older stays exclusive', async () => {
    const cp = plane();
    const shared = await waitFor(
      'east-again to report EndpointShared',
      async () => {
        const c = conditionOf(await get(cp, PROVIDERS, 'macs-b', 'east-again'), 'EndpointExclusive');
        return c?.status === 'False' ? c : undefined;
      },
      60_000,
    );
    expect(shared).toMatchObject({ reason: 'EndpointShared' });
    // The older is of another namespace: said to exist, not named.
    expect(shared.message).toContain('A Provider of another namespace names the same endpoint');
    expect(shared.message).not.toContain('macs-a');
    expect(conditionOf(await get(cp, PROVIDERS, 'macs-a', 'east'), 'EndpointExclusive')).toMatchObject({ status: 'True' });
    // Said, not acted on: the later Provider still works.
    expect(conditionOf(await get(cp, PROVIDERS, 'macs-b', 'east-again'), 'Ready')).toMatchObject({ status: 'True' });
    const events = await waitFor(
      'the EndpointShared Warning Event',
      async () => {
        const found = await warnings(cp, 'macs-b', 'east-again');
        return found.some((e) => e.startsWith('EndpointShared: A Provider of another namespace')) ? found : undefined;
      },
      30_000,
    );
    expect(events.filter((e) => e.startsWith('EndpointShared'))).toHaveLength(1);
  });

  it('creates no VM for a later machine fixing a MAC another holds on the same endpoint, in its namespace or another, until the MAC is free', async () => {
    const cp = plane();
    await applyObjects(cp, [machine('macs-a', 'first', 'east', [{ name: 'eth0', macAddress: MAC }])]);
    await untilProvisioned('macs-a', 'first');
    // The same MAC: on the same Provider, then spelled in capitals on the other Provider of the endpoint.
    await applyObjects(cp, [machine('macs-a', 'second', 'east', [{ name: 'eth0', macAddress: MAC }])]);
    await applyObjects(cp, [machine('macs-b', 'third', 'east-again', [{ name: 'eth0', macAddress: MAC.toUpperCase() }])]);
    for (const [ns, name] of [
      ['macs-a', 'second'],
      ['macs-b', 'third'],
    ] as const) {
      const ready = await waitFor(
        `${name} to report MacAddressInUse`,
        async () => {
          const c = conditionOf(await get(cp, MACHINES, ns, name), 'Ready');
          return c?.reason === 'MacAddressInUse' ? c : undefined;
        },
        60_000,
      );
      expect(ready.status).toBe('False');
      // Named in its own namespace; from another, neither its namespace nor its name.
      if (ns === 'macs-a') expect(ready.message).toContain('is already held by FakeMachine macs-a/first on the same backend endpoint');
      else expect(ready.message).toContain('is already held by a FakeMachine of another namespace on the same backend endpoint');
      expect(ready.message).not.toContain(ns === 'macs-a' ? 'macs-b' : 'macs-a');
      expect(vmNamed(name), `a VM was created for ${name}`).toBe(false);
      expect(await warnings(cp, ns, name)).toContainEqual(expect.stringMatching(/^MacAddressInUse: /));
    }

    // Nothing is lost: once the holder is gone, the older of the two waiting gets its VM, and the other still waits.
    await cp.kubectl(['delete', MACHINES, 'first', '-n', 'macs-a', '--wait=true', '--timeout=120s']);
    await untilProvisioned('macs-a', 'second');
    const third = conditionOf(await get(cp, MACHINES, 'macs-b', 'third'), 'Ready');
    expect(third).toMatchObject({ status: 'False', reason: 'MacAddressInUse' });
    expect(third?.message).not.toContain('second');
    expect(vmNamed('third')).toBe(false);
  });

  it("names neither the namespace nor the machine holding a MAC in another namespace, in the tenant's conditions or Events", async () => {
    const cp = plane();
    const held = '02:00:00:0a:0c:01';
    await applyObjects(cp, [machine('macs-a', 'ledger-db', 'east', [{ name: 'eth0', macAddress: held }])]);
    await untilProvisioned('macs-a', 'ledger-db');
    await applyObjects(cp, [machine('macs-b', 'probe', 'east-again', [{ name: 'eth0', macAddress: held }])]);
    const ready = await waitFor(
      'probe to report MacAddressInUse',
      async () => {
        const c = conditionOf(await get(cp, MACHINES, 'macs-b', 'probe'), 'Ready');
        return c?.reason === 'MacAddressInUse' ? c : undefined;
      },
      60_000,
    );
    expect(vmNamed('probe')).toBe(false);
    const seen = [ready.message ?? '', ...(await warnings(cp, 'macs-b', 'probe'))].join('\n');
    expect(seen).toContain(held);
    expect(seen).not.toContain('macs-a');
    expect(seen).not.toContain('ledger-db');
  });

  it('lets no machine of another namespace that waits behind a VM hold its other MACs', async () => {
    const cp = plane();
    const held = '02:00:00:0a:0d:01';
    const squatted = '02:00:00:0a:0d:02';
    await applyObjects(cp, [machine('macs-a', 'ledger-db-2', 'east', [{ name: 'eth0', macAddress: held }])]);
    await untilProvisioned('macs-a', 'ledger-db-2');
    // The squatter is older and fixes the MAC macs-a will want; it waits for ever behind the MAC ledger-db-2 holds.
    const nics = [
      { name: 'eth0', macAddress: held },
      { name: 'eth1', macAddress: squatted },
    ];
    await applyObjects(cp, [machine('macs-b', 'squatter', 'east-again', nics)]);
    await waitFor('squatter to wait', async () => conditionOf(await get(cp, MACHINES, 'macs-b', 'squatter'), 'Ready')?.reason === 'MacAddressInUse', 60_000);
    // Older by creationTimestamp's whole seconds, not only by name.
    const created = Date.parse((await cp.kubectl(['get', MACHINES, 'squatter', '-n', 'macs-b', '-o', 'jsonpath={.metadata.creationTimestamp}'])).trim());
    await waitFor('a second to pass since the squatter was created', () => (Date.now() >= created + 1_000 ? true : undefined), 10_000);
    await applyObjects(cp, [machine('macs-a', 'ledger-web', 'east', [{ name: 'eth0', macAddress: squatted }])]);
    await untilProvisioned('macs-a', 'ledger-web');
    expect(vmNamed('squatter')).toBe(false);
  }, 240_000);
});
