import { describe, expect, it } from 'vitest';
import { renderInstall, type ManifestObject } from '../../../infra/install/render.js';
import { ROLE_MEMORY, roleRuntimeEnv } from '../../../infra/install/role-runtime.js';

interface Container {
  readonly name: string;
  readonly env: { name: string; value?: string }[];
  readonly resources: { limits: { memory: string }; requests: { memory: string } };
}
type Deployment = ManifestObject & { spec: { template: { spec: { containers: Container[] } } } };

const deployments = (): Deployment[] =>
  renderInstall({ providerShards: [{ backend: 'vsphere', name: 'eu', providerSelector: 'group=eu' }] })
    .flatMap((c) => c.objects)
    .filter((o): o is Deployment => o.kind === 'Deployment');

describe('How Node runs a role', () => {
  it('keeps the V8 old generation under the container limit, with room for code and buffers', () => {
    const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(roleRuntimeEnv(256).NODE_OPTIONS ?? '')?.[1]);
    expect(heapMiB).toBe(192);
  });

  it('is what every Deployment of the install runs with, under the memory it requests and is limited to', () => {
    const names = deployments().map((d) => d.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['banlieue-controller', 'banlieue-provider-vsphere-eu']));
    for (const deployment of deployments()) {
      const [manager] = deployment.spec.template.spec.containers;
      const env = Object.fromEntries((manager?.env ?? []).map((e) => [e.name, e.value]));
      expect(env, deployment.metadata.name).toMatchObject(roleRuntimeEnv(ROLE_MEMORY.limitMiB));
      expect(manager?.resources).toMatchObject({ limits: { memory: `${ROLE_MEMORY.limitMiB}Mi` }, requests: { memory: `${ROLE_MEMORY.requestMiB}Mi` } });
    }
  });
});
