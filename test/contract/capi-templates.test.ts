// `clusterctl generate cluster --infrastructure banlieue[:flavor]` with the
// real clusterctl, from the release assets `make clusterctl-components` wrote
// (the environment's local repository holds every file of that folder): each
// flavor lists the variables it documents, and a generation with them set is
// what the template code checked against the API schema, and the API server
// takes it (server-side apply, for real). A control plane of its own.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { FLAVORS, renderClusterTemplate, renderClusterWithValues } from '../../infra/clusterctl/cluster-templates.js';
import { placeholder } from '../../infra/clusterctl/template-variables.js';
import { buildTools } from '../support/control-plane.js';
import { BANLIEUE_TAG, kindEnvironment, localEnvironment, type CapiEnvironment } from './capi-environment.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** What clusterctl fills in from its own arguments and flags (and so lists as optional). */
const SET_BY_CLUSTERCTL = ['CLUSTER_NAME', 'NAMESPACE', 'CONTROL_PLANE_MACHINE_COUNT', 'WORKER_MACHINE_COUNT'];

/** `--list-variables` output: the names under "Required Variables:" and "Optional Variables:". */
function listedVariables(out: string): { required: string[]; optional: string[] } {
  const section = (title: string): string[] => {
    const body = out.split(`${title}:\n`)[1]?.split(/\n\n|\n(?=\S)/)[0] ?? '';
    return [...body.matchAll(/^\s+- ([A-Z0-9_]+)/gm)].map((m) => m[1] as string).sort();
  };
  return { required: section('Required Variables'), optional: section('Optional Variables') };
}

describe('clusterctl generate cluster --infrastructure banlieue', () => {
  let env: CapiEnvironment;

  beforeAll(async () => {
    env = process.env.E2E_CAPI_ENV === 'kind' ? await kindEnvironment() : await localEnvironment();
    if (process.env.E2E_CAPI_ENV !== 'kind') {
      // The local environment runs CAPI core only; the templates also hold
      // CABPK's and KCP's kinds, whose CRDs come from the same module.
      const { capiModuleDir } = await buildTools();
      for (const dir of ['bootstrap/kubeadm/config/crd/bases', 'controlplane/kubeadm/config/crd/bases']) {
        await env.kubectl(['apply', '--server-side', '-f', join(capiModuleDir, dir)]);
      }
      await env.kubectl(['wait', '--for=condition=Established', '--timeout=120s', 'crd', '--all']);
    }
  }, 600_000);

  afterAll(async () => {
    await env?.stop();
  });

  describe.each(FLAVORS.map((flavor) => ({ flavor, label: flavor || 'default (vsphere)' })))('flavor $label', ({ flavor }) => {
    const name = `tpl-${flavor || 'vsphere'}`;
    const infrastructure = ['--infrastructure', `banlieue:${BANLIEUE_TAG}`, ...(flavor ? ['--flavor', flavor] : [])];
    const template = renderClusterTemplate(flavor);

    it('lists the documented variables: required ones without a default, optional ones with one', async () => {
      const out = await env.clusterctl(['generate', 'cluster', name, ...infrastructure, '--target-namespace', name, '--list-variables']);
      const listed = listedVariables(out);
      // The flavor's own variables: clusterctl v1.14 lists none of the ClusterClass asset's here (seen with the real clusterctl).
      const own = template.variables.filter((v) => template.yaml.includes(placeholder(v)));
      const names = own.map((v) => v.name);
      expect([...listed.required, ...listed.optional].sort()).toEqual([...names].sort());
      const required = own.filter((v) => v.default === undefined && !SET_BY_CLUSTERCTL.includes(v.name)).map((v) => v.name);
      expect(listed.required).toEqual([...required].sort());
    }, 180_000);

    it('generates, with the variables set, what the template code checked against the schema, and the API server applies it', async () => {
      // The required variables at their samples, one default overridden, the rest left to clusterctl.
      const values: Record<string, string | number> = {
        CLUSTER_NAME: name,
        NAMESPACE: name,
        KUBERNETES_VERSION: 'v1.34.1',
        CONTROL_PLANE_MACHINE_COUNT: 3,
        WORKER_MACHINE_COUNT: 2,
        WORKER_MACHINE_CPUS: 4,
      };
      for (const v of template.variables) if (v.default === undefined && values[v.name] === undefined) values[v.name] = v.sample;
      const variables = Object.fromEntries(
        Object.entries(values)
          .filter(([k]) => !SET_BY_CLUSTERCTL.includes(k) && k !== 'KUBERNETES_VERSION')
          .map(([k, v]) => [k, String(v)]),
      );
      const generated = await env.clusterctl(
        [
          'generate',
          'cluster',
          name,
          ...infrastructure,
          '--target-namespace',
          name,
          '--kubernetes-version',
          'v1.34.1',
          '--control-plane-machine-count',
          '3',
          '--worker-machine-count',
          '2',
        ],
        variables,
      );
      const docs = parseAllDocuments(generated).map((d) => d.toJS() as Json);
      expect(docs).toEqual(renderClusterWithValues(flavor, values));

      await env.kubectl(['create', 'namespace', name]);
      await env.kubectl(['apply', '--server-side', '--field-manager=clusterctl-user', '-f', '-'], generated);
      const read = async (kind: string, object: string): Promise<Json> =>
        JSON.parse(await env.kubectl(['get', kind, object, '-n', name, '-o', 'json'])) as Json;
      const cluster = await read('clusters.cluster.x-k8s.io', name);
      const infraCluster = docs.find((d) => d.apiVersion === 'infrastructure.banlieue.io/v1alpha1' && /Cluster$/.test(d.kind as string));
      if (infraCluster) {
        expect((await read(infraCluster.kind as string, name)).spec.controlPlaneEndpoint).toEqual({ host: values.CONTROL_PLANE_ENDPOINT_IP, port: 6443 });
        expect(cluster.spec.infrastructureRef).toEqual({ apiGroup: 'infrastructure.banlieue.io', kind: infraCluster.kind, name });
        expect((await read('kubeadmcontrolplanes.controlplane.cluster.x-k8s.io', `${name}-control-plane`)).spec.replicas).toBe(3);
        expect((await read('machinedeployments.cluster.x-k8s.io', `${name}-md-0`)).spec.replicas).toBe(2);
      } else {
        // A Cluster of a class: what CAPI's topology controller builds the objects from.
        expect(cluster.spec.topology).toMatchObject({
          version: 'v1.34.1',
          controlPlane: { replicas: 3 },
          workers: { machineDeployments: [{ class: 'worker', name: 'md-0', replicas: 2 }] },
          variables: [{ name: 'controlPlaneEndpoint', value: { host: values.CONTROL_PLANE_ENDPOINT_IP, port: 6443 } }],
        });
      }
      // Every object the template names is there, as generated.
      for (const doc of docs) {
        const group = (doc.apiVersion as string).split('/')[0] as string;
        const stored = await read(`${(doc.kind as string).toLowerCase()}.${group}`, doc.metadata.name as string);
        expect(stored.spec).toMatchObject(doc.spec as Json);
      }
    }, 180_000);
  });
});
