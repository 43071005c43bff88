// Optional NetworkPolicies for banlieue pods: metrics only from namespaces
// labelled banlieue.io/monitoring=true; egress only to DNS, the API server and
// backend ports.
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { APP_NAME, Label } from '../api/well-known.js';
import { HEALTH_PORT, METRICS_PORT } from './role-workload.js';
import { componentLabels } from './labels.js';

const tcp = (port: number): { protocol: string; port: kplus.k8s.IntOrString } => ({ protocol: 'TCP', port: kplus.k8s.IntOrString.fromNumber(port) });

/** DNS, API server, vCenter/Proxmox HTTPS, Proxmox API, libvirt TLS/TCP, SSH. */
const EGRESS_PORTS = [443, 6443, 8006, 16514, 16509, 22];

export class NetworkPolicies extends Construct {
  constructor(scope: Construct, id: string, props: { readonly namespace: string }) {
    super(scope, id);
    new kplus.k8s.KubeNetworkPolicy(this, 'banlieue', {
      metadata: { name: 'banlieue', namespace: props.namespace, labels: componentLabels('network-policy') },
      spec: {
        podSelector: { matchLabels: { [Label.name]: APP_NAME } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { 'banlieue.io/monitoring': 'true' } } }],
            ports: [tcp(METRICS_PORT)],
          },
          { ports: [tcp(HEALTH_PORT)] },
        ],
        egress: [
          {
            ports: [
              { protocol: 'UDP', port: kplus.k8s.IntOrString.fromNumber(53) },
              tcp(53),
            ],
          },
          { ports: EGRESS_PORTS.map(tcp) },
        ],
      },
    });
  }
}
