// A string XML 1.0 cannot carry (a C0 control character) in a field that
// reaches vCenter is refused before any SOAP request carries it, and the
// machine says so in a condition naming the request field, rather than sending
// vCenter invalid XML. Through the real roles and vcsim.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendCalls } from '../support/backend-calls.js';
import { INFRA, TestApi, type Obj } from '../support/fixtures.js';
import { startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { vmsNamed } from '../support/vsphere/world.js';

const t = new TestApi();

describe('vSphere machines with characters XML cannot carry', () => {
  let env: VsphereEnv;

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-xml-chars');
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 300_000);

  it('refuses a folder holding a control character before it reaches vCenter, in a condition', async () => {
    const failureDomain = (await t.get(env.world.provider))?.status?.failureDomains?.[0]?.name as string;
    // The Provider publishes any folder: what is refused is the character, not the name.
    await t.patch(env.world.provider, { spec: { allowedTargets: [{ kind: 'folder', names: ['*'] }] } });
    // Written directly, as Cluster API would.
    const machine: Obj = {
      apiVersion: INFRA,
      kind: 'VSphereMachine',
      metadata: { name: 'bell-folder', namespace: env.ns },
      spec: {
        providerRef: { name: 'vcsim' },
        failureDomain,
        template: env.world.vmImage.spec?.sources[0].ref,
        folder: 'team\u0007a',
        numCpus: 1,
        memoryMiB: 512,
      },
    };
    await t.apply(machine);

    const refused = await t.condition(machine, 'Ready', 'False', 'ProvisionFailed', 120_000);
    const message = refused.status?.conditions?.find((c: { type: string }) => c.type === 'Ready')?.message as string;
    expect(message).toContain('holds U+0007');
    expect(message).toContain('a character XML 1.0 cannot carry');
    expect(await vmsNamed(env.client, 'bell-folder')).toEqual([]);
    expect((await backendCalls(env.provider)).CloneVM_Task ?? 0).toBe(0);
    await t.delete(machine);
    await t.gone(machine, 60_000);
  }, 300_000);
});
