// The metrics Service and ServiceMonitor of an install with exposeMetrics and
// serviceMonitor, applied by the real kubectl (strict field validation) to the
// real API server, where the Prometheus Operator's own ServiceMonitor CRD
// (test/fixtures/prometheus-operator) is installed: the API server takes every
// field as rendered, and without that CRD the ServiceMonitor is refused.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { renderInstall, type ManifestObject } from '../../infra/install/render.js';
import { TestApi } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';

const CRD = 'test/fixtures/prometheus-operator/monitoring.coreos.com_servicemonitors.yaml';
const t = new TestApi();

function kubectl(args: string[], input: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(inject('kubectl'), ['--kubeconfig', inject('kubeconfig'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
    child.stdin.end(input);
  });
}

const apply = (objects: ManifestObject[]): Promise<{ code: number | null; out: string }> =>
  kubectl(['apply', '--server-side', '--field-manager=banlieue-test', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));

describe('the metrics Service and ServiceMonitor', () => {
  let ns: { name: string; remove: () => Promise<void> };
  let objects: ManifestObject[];

  beforeAll(async () => {
    ns = await createNamespace('metrics-service');
    objects = renderInstall({ namespace: ns.name, exposeMetrics: true, serviceMonitor: true })
      .flatMap((c) => c.objects)
      .filter((o) => o.kind === 'Service' || o.kind === 'ServiceMonitor');
  });

  afterAll(async () => {
    await ns.remove();
    // Leave the suites' shared API server without the foreign kind.
    await t.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'servicemonitors.monitoring.coreos.com' } });
  });

  it('has the ServiceMonitor refused where the Prometheus Operator is not installed', async () => {
    // The CRD is installed by the next case; the API server knows no ServiceMonitor before.
    const monitors = objects.filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors.length).toBeGreaterThan(0);
    const refused = await apply(monitors);
    expect(refused.code).not.toBe(0);
    expect(refused.out).toMatch(/no matches for kind "ServiceMonitor"|the server could not find the requested resource/);
  });

  it("is taken field for field by the API server with the Prometheus Operator's ServiceMonitor CRD", async () => {
    const installed = await kubectl(['apply', '--server-side', '--field-manager=banlieue-test', '-f', '-'], readFileSync(CRD, 'utf8'));
    expect(installed.code, installed.out).toBe(0);
    const established = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/servicemonitors.monitoring.coreos.com'], '');
    expect(established.code, established.out).toBe(0);
    const applied = await apply(objects);
    expect(applied.code, applied.out).toBe(0);
    for (const o of objects) {
      const live = await t.get({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace: ns.name } });
      expect(live?.metadata.labels, `${o.kind} ${o.metadata.name}`).toEqual(o.metadata.labels);
      // Nothing pruned: the schema knows every field the install sets.
      expect(live?.spec, `${o.kind} ${o.metadata.name}`).toMatchObject(o.spec as object);
    }
    // The same apply refuses a field the schema does not know, so a misspelt field of the install would fail above.
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor');
    const misspelt = await apply(monitor ? [{ ...monitor, spec: { ...(monitor.spec as object), endpoint: [] } }] : []);
    expect(misspelt.code).not.toBe(0);
    expect(misspelt.out).toMatch(/unknown field "(spec\.)?endpoint"/);
  });
});
