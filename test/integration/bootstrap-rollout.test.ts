// `banlieue bootstrap operator --wait` (the default) on a control plane of its own whose
// kube-controller-manager runs the deployment and replicaset controllers: the install's
// Deployments get ReplicaSets and pods, as on a real cluster. The plane has no node and
// no scheduler, so a pod never runs unless the test writes its status as a kubelet would.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { loadKubeConfig } from '../../controller/runtime/kube-config.js';
import { banlieueCommand } from '../support/bundles.js';
import { buildKubeTools, ControlPlane } from '../support/control-plane.js';
import { StopWaiting, waitFor } from '../support/wait.js';

interface Run {
  code: number | null;
  stderr: string;
}

interface Pod {
  metadata: { name: string };
  spec: { containers: { name: string; image: string }[] };
  status?: { containerStatuses?: unknown[]; conditions?: { type: string; status: string }[] };
}

let cp: ControlPlane;
let api: KubeApi;

beforeAll(async () => {
  cp = await ControlPlane.start(await buildKubeTools(), { controllers: ['deployment', 'replicaset'] });
  api = new KubeApi(loadKubeConfig(cp.kubeconfigPath));
}, 180_000);

afterAll(async () => {
  await cp?.stop();
});

/** `banlieue bootstrap operator` against this plane; `whileRunning` runs beside it until it exits. */
async function bootstrap(args: string[], whileRunning?: (exited: () => boolean) => Promise<void>): Promise<Run> {
  const [node, command] = await banlieueCommand(['bootstrap', 'operator', '--kubeconfig', cp.kubeconfigPath, '--version', 'v0.0.0-test', ...args]);
  let done = false;
  const run = new Promise<Run>((resolve) => {
    const child = spawn(node, command, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      done = true;
      resolve({ code, stderr });
    });
  });
  await whileRunning?.(() => done);
  return run;
}

/** What a kubelet writes of each pod in `ns` (those not yet so), until bootstrap exits or `count` pods carry it. */
async function asKubelet(ns: string, count: number, exited: () => boolean, status: (pod: Pod) => Record<string, unknown>): Promise<void> {
  const written = new Set<string>();
  await waitFor(
    `${count} pods in ${ns} to carry the status a kubelet would write`,
    async () => {
      if (exited()) throw new StopWaiting('bootstrap operator exited first');
      const pods = await api.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`);
      for (const pod of pods.items.filter((p) => !written.has(p.metadata.name))) {
        await api.request('PATCH', `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}/status`, {
          body: { status: status(pod) },
          contentType: 'application/merge-patch+json',
        });
        written.add(pod.metadata.name);
      }
      return written.size >= count;
    },
    120_000,
  );
}

describe('banlieue bootstrap operator --wait', () => {
  it("fails naming ProgressDeadlineExceeded and why the controller's pod is not running (no node takes it)", async () => {
    const result = await bootstrap(['--namespace', 'rollout-pending', '--backends', 'vsphere', '--progress-deadline', '5']);
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.stderr).toContain('applied Deployment rollout-pending/banlieue-controller');
    expect(result.stderr).toMatch(/Waiting for deployment "banlieue-controller" rollout to finish: 0 of 1 updated replicas are available\.\.\./);
    expect(result.stderr).toMatch(
      /error: deployment "banlieue-controller" exceeded its progress deadline \(ReplicaSet "banlieue-controller-\w+" has timed out progressing\.\); pod banlieue-controller-\w+-\w+: Pending, not scheduled to any node/,
    );
    expect(result.stderr).not.toContain('installed (');
  });

  it('fails naming the image pull back-off its pod reports', async () => {
    const ns = 'rollout-image';
    const result = await bootstrap(['--namespace', ns, '--backends', '', '--progress-deadline', '30'], (exited) =>
      asKubelet(ns, 1, exited, (pod) => ({
        phase: 'Pending',
        containerStatuses: pod.spec.containers.map((c) => ({
          name: c.name,
          image: c.image,
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image}"` } },
        })),
      })),
    );
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.stderr).toMatch(
      /error: deployment "banlieue-controller" exceeded its progress deadline .*; pod banlieue-controller-\w+-\w+: container manager ImagePullBackOff: Back-off pulling image "ghcr.io\/banlieue\/banlieue:v0.0.0-test"/,
    );
  });

  it('returns once every Deployment is available, saying so for each', async () => {
    const ns = 'rollout-ready';
    const now = new Date().toISOString();
    const result = await bootstrap(['--namespace', ns, '--backends', 'vsphere,proxmox'], (exited) =>
      asKubelet(ns, 3, exited, (pod) => ({
        phase: 'Running',
        conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: now })),
        containerStatuses: pod.spec.containers.map((c) => ({
          name: c.name,
          image: c.image,
          imageID: '',
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: now } },
        })),
      })),
    );
    expect(result.code, result.stderr).toBe(0);
    for (const name of ['banlieue-controller', 'banlieue-provider-vsphere', 'banlieue-provider-proxmox']) {
      expect(result.stderr).toContain(`deployment "${name}" successfully rolled out`);
    }
    expect(result.stderr).toMatch(/banlieue v0.0.0-test installed \(\d+ objects\)\n$/);
  });
});
