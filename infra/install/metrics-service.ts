// How Prometheus finds a role's /metrics when the install exposes them
// (BanlieueInstallProps.exposeMetrics): a Service per role workload, and
// optionally a Prometheus Operator ServiceMonitor selecting it.
import { ApiObject } from 'cdk8s';
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { componentLabels, selectorLabels } from './labels.js';

/** The name of the metrics port on the container and the Service. */
export const METRICS_PORT_NAME = 'metrics';

export interface MetricsServiceProps {
  readonly namespace: string;
  /** The role's object name (banlieue-controller): the Service is `<name>-metrics`, the ServiceMonitor `<name>`. */
  readonly name: string;
  /** app.kubernetes.io/component of the role's pods (controller, provider-vsphere). */
  readonly component: string;
  /** The container's metrics port. */
  readonly port: number;
  /**
   * Add a ServiceMonitor (monitoring.coreos.com/v1) for the Service.
   * @default false
   */
  readonly serviceMonitor?: boolean;
}

export class MetricsService extends Construct {
  constructor(scope: Construct, id: string, props: MetricsServiceProps) {
    super(scope, id);
    const labels = componentLabels(props.component);
    new kplus.k8s.KubeService(this, 'service', {
      metadata: { name: `${props.name}-metrics`, namespace: props.namespace, labels },
      spec: {
        type: 'ClusterIP',
        selector: selectorLabels(props.component),
        ports: [{ name: METRICS_PORT_NAME, port: props.port, targetPort: kplus.k8s.IntOrString.fromString(METRICS_PORT_NAME), protocol: 'TCP' }],
      },
    });
    if (props.serviceMonitor) {
      new ServiceMonitor(this, 'service-monitor', {
        metadata: { name: props.name, namespace: props.namespace, labels },
        spec: {
          // The role's Service alone: the pods' selector labels are on it, and on no other Service.
          selector: { matchLabels: selectorLabels(props.component) },
          namespaceSelector: { matchNames: [props.namespace] },
          endpoints: [{ port: METRICS_PORT_NAME, path: '/metrics', scheme: 'http' }],
        },
      });
    }
  }
}

/**
 * The fields of a Prometheus Operator ServiceMonitor the install sets. Written by
 * hand rather than `cdk8s import`ed: imports/ is for tests and is not part of the
 * npm package, and these few fields are all the install needs.
 */
export interface ServiceMonitorSpec {
  readonly selector: { readonly matchLabels: Readonly<Record<string, string>> };
  readonly namespaceSelector: { readonly matchNames: readonly string[] };
  readonly endpoints: readonly { readonly port: string; readonly path: string; readonly scheme: 'http' | 'https' }[];
}

export interface ServiceMonitorProps {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly labels: Readonly<Record<string, string>> };
  readonly spec: ServiceMonitorSpec;
}

/** A ServiceMonitor (monitoring.coreos.com/v1): applying it needs the Prometheus Operator's CRD. */
export class ServiceMonitor extends ApiObject {
  static readonly GVK = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' } as const;

  constructor(scope: Construct, id: string, props: ServiceMonitorProps) {
    super(scope, id, { ...ServiceMonitor.GVK, metadata: { ...props.metadata, labels: { ...props.metadata.labels } }, spec: props.spec });
  }
}
