// The in-cluster path: the built image's root filesystem, its entrypoint run as
// the Deployment runs it (the rendered install's args, env, user, ports and
// probes; KUBERNETES_SERVICE_HOST/PORT and the ServiceAccount token + CA at
// /var/run/secrets/kubernetes.io/serviceaccount; a read-only root), the
// controller and the vSphere provider under exactly their installed RBAC,
// against the real control plane and vcsim. Nowhere else do the in-cluster
// config loader, the Deployment's flags and the installed RBAC meet.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRY } from '../../infra/install/install-props.js';
import { renderInstall } from '../../infra/install/render.js';
import { startVcsim } from '../peers/vsphere/vcsim.js';
import { TestApi, vm, type Obj } from '../support/fixtures.js';
import { createNamespace, testKubeConfig } from '../support/kube.js';
import { unpackImage, type OciImage } from '../support/oci-archive.js';
import { startImagePod, type DeploymentSpec, type ImagePod } from '../support/pod-sandbox.js';
import { imageArchive, makeRelease } from '../support/release-build.js';
import { INSTALL_NS, installDefault, serviceAccountToken } from '../support/tenant.js';
import { readyWithAddress, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { makeTemplate, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const CONTROLLER = 'banlieue-controller';
const PROVIDER = 'banlieue-provider-vsphere';

/** The Deployment `name` of the default install, as `bootstrap operator` renders it. */
function renderedDeployment(name: string): DeploymentSpec {
  const found = renderInstall()
    .flatMap((chart) => chart.objects)
    .find((o) => o.kind === 'Deployment' && o.metadata.name === name);
  if (!found) throw new Error(`the default install renders no Deployment ${name}`);
  return found as unknown as DeploymentSpec;
}

function leaseHolder(name: string): Promise<string | undefined> {
  return t
    .get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: INSTALL_NS } })
    .then((lease) => (lease?.spec?.holderIdentity as string | undefined) || undefined);
}

/** The JSON log records a role wrote (one per line). */
function logRecords(pod: ImagePod): Record<string, unknown>[] {
  return pod
    .logs()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return []; // a line still being written
      }
    });
}

describe('The image, run the way its Deployment runs it', () => {
  let rootfs = '';
  let image: OciImage;
  let env: VsphereEnv | undefined;
  let vcsimPort = 0;
  const cluster = testKubeConfig().getCurrentCluster();
  const server = cluster?.server ?? '';
  const caCert = Buffer.from(cluster?.caData ?? '', 'base64').toString('utf8');

  async function startPod(name: string, hostPorts: number[] = []): Promise<ImagePod> {
    const deployment = renderedDeployment(name);
    const token = await serviceAccountToken(INSTALL_NS, deployment.spec.template.spec.serviceAccountName);
    return startImagePod({ rootfs, image: image.config.config, deployment, token, server, caCert, hostPorts });
  }

  beforeAll(async () => {
    await makeRelease(['image']);
    rootfs = mkdtempSync(join(tmpdir(), 'banlieue-rootfs-'));
    image = await unpackImage(imageArchive(), rootfs);
    await installDefault();

    const suffix = Math.random().toString(36).slice(2, 7);
    const { name: ns, remove: removeNs } = await createNamespace('in-cluster');
    const vcsim = await startVcsim({ datacenters: 1, clusters: 1 });
    vcsimPort = Number(new URL(vcsim.url).port);
    const client = await vcsimClient(vcsim);
    await makeTemplate(client, `ubuntu-${suffix}`);
    const world = vsphereWorld(ns, vcsim, `in-cluster-${suffix}`, `ubuntu-${suffix}`);
    for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await t.apply(obj);
    const controller = await startPod(CONTROLLER);
    const provider = await startPod(PROVIDER, [vcsimPort]);
    env = { ns, removeNs, vcsim, client, world, controller, provider, providerFlags: [] };
  }, 1_800_000);

  afterAll(async () => {
    try {
      await stopVsphereEnv(env);
    } finally {
      // The Leases outlive their holders; the next holder should not wait for them.
      for (const name of [CONTROLLER, PROVIDER])
        await t.delete({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: INSTALL_NS } });
      if (rootfs) rmSync(rootfs, { recursive: true, force: true });
    }
  }, 300_000);

  it('is the image the install names, and runs as its non-root user', () => {
    const container = renderedDeployment(CONTROLLER).spec.template.spec.containers.find((c) => c.name === 'manager');
    expect(container?.image).toBe(`${DEFAULT_REGISTRY}/banlieue:${image.refName}`);
    expect(image.config.config.User).toBe('65532:65532');
    expect(container?.securityContext?.readOnlyRootFilesystem).toBe(true);
  });

  it('takes the Lease of each role in banlieue-system under its pod name', async () => {
    const [controller, provider] = [env?.controller, env?.provider] as ImagePod[];
    if (!controller || !provider) throw new Error('no environment');
    for (const [lease, pod] of [
      [CONTROLLER, controller],
      [PROVIDER, provider],
    ] as const) {
      await waitFor(`${pod.name} to hold Lease ${INSTALL_NS}/${lease}`, async () => (await leaseHolder(lease)) === pod.name, 120_000).catch((err: Error) => {
        throw new Error(`${err.message}\n--- ${pod.name} ---\n${pod.logs()}`);
      });
    }
  }, 300_000);

  it("answers the kubelet's probes on the ports the Deployment names", async () => {
    for (const pod of [env?.controller, env?.provider] as ImagePod[]) {
      const deployment = renderedDeployment(pod === env?.controller ? CONTROLLER : PROVIDER);
      const manager = deployment.spec.template.spec.containers.find((c) => c.name === 'manager');
      const liveness = manager?.livenessProbe?.httpGet;
      const readiness = manager?.readinessProbe?.httpGet;
      if (!liveness || !readiness) throw new Error(`${deployment.metadata.name} has no HTTP probes`);
      expect(manager?.ports?.map((p) => p.containerPort)).toContain(readiness.port);
      expect((await pod.get(liveness.port, liveness.path))[0]).toBe(200);
      await waitFor(`${pod.name} ready (leader)`, async () => (await pod.get(readiness.port, readiness.path))[0] === 200, 120_000);
    }
  }, 300_000);

  it('turns a VirtualMachine into a Ready VM on vcsim', async () => {
    if (!env) throw new Error('no environment');
    await t.apply(vm(env.ns, 'web', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name));
    await t.condition(env.world.provider, 'Ready', 'True', undefined, 120_000);
    const ready = await readyWithAddress(env, 'web', '10.16.0.10', 180_000);
    expect((ready.status?.addresses as { address: string }[] | undefined)?.map((a) => a.address)).toContain('10.16.0.10');
  }, 600_000);

  it('reports the permission it lacks when one rule of its installed role is cut', async () => {
    if (!env) throw new Error('no environment');
    const roleRef = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: PROVIDER } };
    const role = (await t.get(roleRef)) as (Obj & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }) | undefined;
    if (!role) throw new Error(`ClusterRole ${PROVIDER} is not installed`);
    const cut = role.rules.findIndex((r) => r.resources.includes('vspheremachines') && r.verbs.includes('list'));
    expect(cut).toBeGreaterThanOrEqual(0);
    await env.provider.stop();
    await t.patch(roleRef, { rules: role.rules.filter((_, i) => i !== cut) });
    try {
      env.provider = await startPod(PROVIDER, [vcsimPort]);
      const pod = env.provider as ImagePod;
      const forbidden = `"system:serviceaccount:${INSTALL_NS}:${PROVIDER}" cannot list resource "vspheremachines"`;
      await waitFor(`${pod.name} to report ${forbidden}`, () => logRecords(pod).some((r) => String(r.err ?? '').includes(forbidden)), 180_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}\n--- ${pod.name} ---\n${pod.logs()}`);
        },
      );
    } finally {
      // The install as it was (bootstrap operator re-applies the role), and a provider that
      // starts under it, to take the finalizers off when the suite ends.
      await installDefault();
      await env.provider.stop();
      env.provider = await startPod(PROVIDER, [vcsimPort]);
    }
  }, 600_000);
});
