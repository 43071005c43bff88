// A machine names only what its Provider publishes. The admin's vCenter credentials reach
// more than a tenant should (here a distributed port group, say the backup network, that
// no failure domain or class of the Provider publishes): a tenant VSphereMachine naming it
// would otherwise get a VM plugged into it. Tried on the default install as the tenant's
// ServiceAccount, vcsim as the vCenter: the machine waits (Ready=False TargetNotPublished,
// naming the field), no CloneVM_Task is asked for; the tenant may not publish it on the
// admin's Provider itself; once the admin lists it in spec.allowedTargets, the same machine
// is cloned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendCalls } from '../support/backend-calls.js';
import { INFRA, TestApi, machineRef, type Obj, readyOf } from '../support/fixtures.js';
import { createTenant, type Tenant } from '../support/tenant.js';
import { stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { startInstalledVsphereEnv } from '../support/vsphere/installed-env.js';
import { playTools, uuidOf, vmsNamed } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
/** In vcsim's inventory, reached by every host of DC0_C0, and published by no class of the world's Provider. */
const UNPUBLISHED_PORT_GROUP = 'DC0_DVPG0';

describe('a machine names only what its Provider publishes (default install, vcsim, the tenant as its ServiceAccount)', () => {
  let env: VsphereEnv;
  let tenant: Tenant;
  let machine: Obj;

  beforeAll(async () => {
    env = await startInstalledVsphereEnv('published-targets');
    tenant = await createTenant(env.ns);
    const fds = (await t.get(env.world.provider))?.status?.failureDomains as { name: string }[];
    machine = {
      apiVersion: INFRA,
      kind: 'VSphereMachine',
      metadata: { name: 'backup-net', namespace: env.ns },
      spec: {
        providerRef: { name: 'vcsim' },
        failureDomain: fds[0]?.name,
        template: env.world.vmImage.spec?.sources[0].ref,
        numCpus: 1,
        memoryMiB: 512,
        network: [{ name: 'eth0', portGroup: UNPUBLISHED_PORT_GROUP }],
      },
    };
  }, 240_000);
  afterAll(async () => {
    await t.delete(machineRef('vsphere', env.ns, 'backup-net'));
    await t.gone(machineRef('vsphere', env.ns, 'backup-net'), 120_000);
    await stopVsphereEnv(env);
  }, 300_000);

  it('keeps a tenant machine naming an unpublished port group waiting: Ready=False TargetNotPublished on the field, and vCenter clones nothing', async () => {
    expect(await tenant.serviceAccount.create(machine)).toBeUndefined();
    // Whichever comes first: the refusal, or a VM cloned for the machine.
    const live = await waitFor(
      'backup-net refused or cloned',
      async () => {
        const seen = await t.get(machine);
        if (readyOf(seen)?.reason === 'TargetNotPublished') return seen;
        return (await vmsNamed(env.client, 'backup-net')).length > 0 ? seen : undefined;
      },
      120_000,
    );
    expect(await vmsNamed(env.client, 'backup-net')).toEqual([]);
    expect(readyOf(live)).toMatchObject({ status: 'False', reason: 'TargetNotPublished' });
    expect(readyOf(live)?.message).toContain(`spec.network[0].portGroup "${UNPUBLISHED_PORT_GROUP}"`);
    expect(readyOf(live)?.message).toContain('spec.allowedTargets');
    expect((await backendCalls(env.provider)).CloneVM_Task ?? 0).toBe(0);
  }, 180_000);

  it("refuses the tenant's own publishing on the admin's Provider: only who may get its credentials Secret sets spec.allowedTargets", async () => {
    const publish = { spec: { allowedTargets: [{ kind: 'distributedPortGroup', names: ['*'] }] } };
    for (const actor of tenant.actors) expect(await actor.patch(env.world.provider, publish)).toContain('only who may get its credentials Secret');
    expect((await t.get(env.world.provider))?.spec?.allowedTargets).toBeUndefined();
  });

  it('clones the waiting machine once the admin publishes the port group in spec.allowedTargets', async () => {
    await t.patch(env.world.provider, { spec: { allowedTargets: [{ kind: 'distributedPortGroup', names: [UNPUBLISHED_PORT_GROUP] }] } });
    const uuid = uuidOf((await t.exists(machine, (o) => typeof o.spec?.providerID === 'string', 60_000)).spec?.providerID as string);
    await waitFor('backup-net cloned in vcsim', async () => ((await playTools(env.client, uuid, '10.51.0.10')) ? true : undefined), 180_000);
    await t.condition(machine, 'Ready', 'True', 'Reconciled', 120_000);
    expect(await vmsNamed(env.client, 'backup-net')).toEqual(['backup-net']);
  }, 360_000);
});
