// Optional NetworkPolicies for banlieue pods: health from anywhere (the
// kubelet), metrics (when the install exposes them) only from namespaces
// labelled banlieue.io/monitoring=true; egress only to DNS, the API server and
// backend ports, and on those only to the addresses the install names
// (networkPolicyEgress), when it names them: an endpoint is what a Provider's
// writer chooses, and the provider pods dial it.
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { BACKEND_APIS } from '../api/backends.js';
import { APP_NAME, Label } from '../api/well-known.js';
import { HEALTH_PORT, METRICS_PORT } from './role-workload.js';
import type { NetworkPolicyEgress } from './install-props.js';
import { componentLabels } from './labels.js';

const tcp = (port: number): { protocol: string; port: kplus.k8s.IntOrString } => ({ protocol: 'TCP', port: kplus.k8s.IntOrString.fromNumber(port) });

/** The API server's ports. */
const API_SERVER_PORTS = [443, 6443];
/** Every port a backend's provider dials. */
const BACKEND_PORTS = [...new Set(BACKEND_APIS.flatMap((b) => b.egressPorts))];

export interface NetworkPoliciesProps {
  readonly namespace: string;
  /** Whether /metrics listens on the pod IP (BanlieueInstallProps.exposeMetrics); otherwise no ingress to it. */
  readonly exposeMetrics: boolean;
  /** Where the pods may connect (BanlieueInstallProps.networkPolicyEgress, checked there); unset lists: any address. */
  readonly egress: NetworkPolicyEgress;
}

/** An egress rule to `ports`, at `cidrs` when given (else at any address). */
function egressTo(ports: readonly number[], cidrs: readonly string[] | undefined): kplus.k8s.NetworkPolicyEgressRule {
  return { ...(cidrs ? { to: cidrs.map((cidr) => ({ ipBlock: { cidr } })) } : {}), ports: ports.map(tcp) };
}

export class NetworkPolicies extends Construct {
  constructor(scope: Construct, id: string, props: NetworkPoliciesProps) {
    super(scope, id);
    new kplus.k8s.KubeNetworkPolicy(this, 'banlieue', {
      metadata: { name: 'banlieue', namespace: props.namespace, labels: componentLabels('network-policy') },
      spec: {
        podSelector: { matchLabels: { [Label.name]: APP_NAME } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          ...(props.exposeMetrics
            ? [{ from: [{ namespaceSelector: { matchLabels: { 'banlieue.io/monitoring': 'true' } } }], ports: [tcp(METRICS_PORT)] }]
            : []),
          { ports: [tcp(HEALTH_PORT)] },
        ],
        egress: [
          {
            ports: [{ protocol: 'UDP', port: kplus.k8s.IntOrString.fromNumber(53) }, tcp(53)],
          },
          egressTo(API_SERVER_PORTS, props.egress.apiServer),
          // No rule for no port: a rule without ports allows every port.
          ...(BACKEND_PORTS.length > 0 ? [egressTo(BACKEND_PORTS, props.egress.backends)] : []),
        ],
      },
    });
  }
}
