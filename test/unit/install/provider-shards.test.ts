// The install's provider shards: one Deployment per shard of a backend, each on its selector, under the backend's one identity.
import { describe, expect, it } from 'vitest';
import { resolveInstallProps, type BanlieueInstallProps, type ProviderShard } from '../../../infra/install/install-props.js';
import { renderInstall, type ManifestObject } from '../../../infra/install/render.js';

type Deployment = ManifestObject & {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: { serviceAccountName: string; containers: { args: string[] }[] } };
  };
};

const objects = (props: BanlieueInstallProps): ManifestObject[] => renderInstall(props).flatMap((c) => c.objects);
const deployments = (props: BanlieueInstallProps): Deployment[] => objects(props).filter((o): o is Deployment => o.kind === 'Deployment');
const shards: BanlieueInstallProps = {
  providerShards: [
    { backend: 'vsphere', name: 'eu', providerSelector: 'vcenter-group=eu' },
    { backend: 'vsphere', name: 'us', providerSelector: 'vcenter-group in (us-east,us-west)' },
  ],
};

describe('Provider shards in the install', () => {
  it("runs a backend's shards as a Deployment each, on its selector, instead of the backend's one", () => {
    const byName = new Map(deployments(shards).map((d) => [d.metadata.name, d]));
    expect(byName.has('banlieue-provider-vsphere')).toBe(false);
    expect(byName.get('banlieue-provider-vsphere-eu')?.spec.template.spec.containers[0]?.args.slice(0, 3)).toEqual([
      'provider',
      'vsphere',
      '--provider-selector=vcenter-group=eu',
    ]);
    expect(byName.get('banlieue-provider-vsphere-us')?.spec.template.spec.containers[0]?.args.slice(0, 3)).toEqual([
      'provider',
      'vsphere',
      '--provider-selector=vcenter-group in (us-east,us-west)',
    ]);
    // Other backends keep their one Deployment.
    expect(byName.get('banlieue-provider-proxmox')?.spec.template.spec.containers[0]?.args.slice(0, 2)).toEqual(['provider', 'proxmox']);
  });

  it('selects each shard its own pods, all running as the backend identity', () => {
    const [eu, us] = ['eu', 'us'].map((n) => deployments(shards).find((d) => d.metadata.name === `banlieue-provider-vsphere-${n}`));
    for (const [d, name] of [
      [eu, 'eu'],
      [us, 'us'],
    ] as const) {
      expect(d?.spec.selector.matchLabels).toMatchObject({ 'app.kubernetes.io/component': 'provider-vsphere', 'banlieue.io/shard': name });
      expect(d?.spec.template.metadata.labels).toMatchObject(d?.spec.selector.matchLabels ?? {});
      expect(d?.spec.template.spec.serviceAccountName).toBe('banlieue-provider-vsphere');
    }
  });

  it("leaves RBAC as it is: the shards share the backend's ServiceAccount, roles and bindings", () => {
    const rbac = (props: BanlieueInstallProps): ManifestObject[] => objects(props).filter((o) => o.kind !== 'Deployment');
    expect(rbac(shards)).toEqual(rbac({}));
  });

  it.each<[string, readonly ProviderShard[], string]>([
    ['a backend the install leaves out', [{ backend: 'proxmox', name: 'a', providerSelector: 'x=y' }], 'providerShards[0].backend: "proxmox"'],
    [
      'a backend that runs on its hosts',
      [{ backend: 'cloud-hypervisor', name: 'a', providerSelector: 'x=y' }],
      'providerShards[0].backend: "cloud-hypervisor"',
    ],
    ['a name that is no DNS label', [{ backend: 'vsphere', name: 'EU', providerSelector: 'x=y' }], 'providerShards[0].name: "EU" is not a DNS-1123 label'],
    [
      'a selector kubectl would refuse',
      [{ backend: 'vsphere', name: 'eu', providerSelector: 'group in eu' }],
      'providerShards[0].providerSelector: expected "("',
    ],
    [
      'two shards of one name',
      [
        { backend: 'vsphere', name: 'eu', providerSelector: 'a=b' },
        { backend: 'vsphere', name: 'eu', providerSelector: 'a=c' },
      ],
      'providerShards[1].name: another vsphere shard has the same name',
    ],
    [
      'two shards of one selector (one Lease)',
      [
        { backend: 'vsphere', name: 'eu', providerSelector: 'a=b' },
        { backend: 'vsphere', name: 'eu2', providerSelector: 'a==b' },
      ],
      'providerShards[1].providerSelector: another vsphere shard has the same providerSelector',
    ],
  ])('refuses %s, naming the prop', (_why, providerShards, message) => {
    expect(() => resolveInstallProps({ backends: ['vsphere', 'cloud-hypervisor'], providerShards })).toThrow(message);
  });
});
