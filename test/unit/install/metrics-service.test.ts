// How Prometheus finds the roles' /metrics: a Service per role workload when the
// install exposes metrics, and a ServiceMonitor per role when also asked for.
import { describe, expect, it } from 'vitest';
import type { BanlieueInstallProps } from '../../../infra/install/install-props.js';
import { renderInstall, type ManifestObject } from '../../../infra/install/render.js';
import { METRICS_PORT } from '../../../infra/install/role-workload.js';

interface Deployment extends ManifestObject {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: { containers: { args: string[]; ports: { name: string; containerPort: number }[] }[] } };
  };
}
interface Service extends ManifestObject {
  spec: { type: string; selector: Record<string, string>; ports: { name: string; port: number; targetPort: string | number; protocol: string }[] };
}
interface ServiceMonitor extends ManifestObject {
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    endpoints: { port: string; path: string; scheme: string }[];
  };
}

const all = (props: BanlieueInstallProps = {}): ManifestObject[] => renderInstall(props).flatMap((c) => c.objects);
const ofKind = <T extends ManifestObject>(objects: ManifestObject[], kind: string): T[] => objects.filter((o): o is T => o.kind === kind);

/** Whether `labels` carries every entry of `selector`. */
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('the metrics Service and ServiceMonitor of the install', () => {
  it('adds neither while metrics listen on loopback (the default)', () => {
    const kinds = all().map((o) => o.kind);
    expect(kinds).not.toContain('Service');
    expect(kinds).not.toContain('ServiceMonitor');
  });

  it("gives each role workload a Service whose metrics port reaches that role's pods and no other's", () => {
    const objects = all({ namespace: 'virt', exposeMetrics: true });
    const deployments = ofKind<Deployment>(objects, 'Deployment');
    const services = ofKind<Service>(objects, 'Service');
    expect(services.map((s) => s.metadata.name).sort()).toEqual(deployments.map((d) => `${d.metadata.name}-metrics`).sort());
    for (const service of services) {
      expect(service.metadata.namespace).toBe('virt');
      expect(service.spec.type).toBe('ClusterIP');
      expect(service.spec.ports).toEqual([{ name: 'metrics', port: METRICS_PORT, targetPort: 'metrics', protocol: 'TCP' }]);
      const served = deployments.filter((d) => selects(service.spec.selector, d.spec.template.metadata.labels));
      expect(served.map((d) => `${d.metadata.name}-metrics`)).toEqual([service.metadata.name]);
      // The port the Service names is the container's metrics port, listening on the pod IP.
      const container = served[0]?.spec.template.spec.containers[0];
      expect(container?.ports).toContainEqual({ name: 'metrics', containerPort: METRICS_PORT });
      expect(container?.args).toContain('--metrics-bind-address=0.0.0.0');
    }
  });

  it('adds no ServiceMonitor unless asked, even with metrics exposed', () => {
    expect(all({ exposeMetrics: true }).map((o) => o.kind)).not.toContain('ServiceMonitor');
  });

  it("adds a ServiceMonitor per role that selects exactly that role's metrics Service on its named port", () => {
    const objects = all({ namespace: 'virt', exposeMetrics: true, serviceMonitor: true });
    const services = ofKind<Service>(objects, 'Service');
    const monitors = ofKind<ServiceMonitor>(objects, 'ServiceMonitor');
    expect(monitors).toHaveLength(services.length);
    for (const monitor of monitors) {
      expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
      expect(monitor.metadata.namespace).toBe('virt');
      expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['virt'] });
      expect(monitor.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', scheme: 'http' }]);
      const selected = services.filter((s) => selects(monitor.spec.selector.matchLabels, s.metadata.labels));
      expect(selected.map((s) => s.metadata.name)).toEqual([`${monitor.metadata.name}-metrics`]);
    }
  });

  it('refuses a ServiceMonitor for metrics that listen on loopback only, naming both props', () => {
    expect(() => all({ serviceMonitor: true })).toThrow(/serviceMonitor needs exposeMetrics/);
  });
});
