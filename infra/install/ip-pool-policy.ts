// The confused-deputy rule for IPAM pools: a machine's NIC may take its address from a pool
// (addressesFromPools) only when whoever writes the machine, or the machine template CAPI clones
// machines from, may `get` that pool. The provider role claims the address for the machine
// (an IPAddressClaim in the machine's namespace), and IPAM providers hand out addresses of any
// pool a claim names, the cluster-scoped ones (GlobalInClusterIPPool) included: without this
// rule a tenant would take addresses from the admins' pools, or another team's.
//
// CAPI's manager clones machines from templates (whose authors this rule checked) and may get
// no pool: it, and cluster admins, hold the virtual permission `use` on `<plural>/ippools`
// cluster-wide (rbac-rules.ts), which passes.
//
// A namespaced pool is one of the machine's namespace, so `get` is asked there; a pool of a kind
// known to be cluster-scoped needs a cluster-wide `get` (a Role in the namespace naming that
// resource does not count). The resource is the kind's plural, lower case, as Kubernetes names
// CRDs (InClusterIPPool → inclusterippools). A pool an update keeps is not asked again.
import { INFRA_GROUP } from '../api/kind.js';
import { INFRA_MACHINE_KINDS, INFRA_MACHINE_TEMPLATE_KINDS } from '../api/kinds.js';
import { IP_POOLS_SUBRESOURCE, IP_POOLS_VERB } from './rbac-rules.js';
import { celString, type ValidatingPolicyProps } from './validating-policy.js';

/** CAPI's IPAM API group, where the in-cluster IPAM provider serves its pools. */
const IPAM_GROUP = 'ipam.cluster.x-k8s.io';

/** Pool kinds served cluster-scoped: a reference names one of the whole cluster, not of the namespace. */
export const CLUSTER_SCOPED_POOL_KINDS: readonly { readonly apiGroup: string; readonly kind: string }[] = [
  { apiGroup: IPAM_GROUP, kind: 'GlobalInClusterIPPool' },
];

type SchemaNode = { readonly type?: unknown; readonly items?: SchemaNode; readonly properties?: Readonly<Record<string, SchemaNode>> };

/** The spec lists whose entries may take addresses from pools (`network`, `nics`), read off every machine kind's schema. */
export function poolAddressedLists(): string[] {
  const fields = INFRA_MACHINE_KINDS.flatMap((kind) =>
    Object.entries((kind.spec as SchemaNode).properties ?? {})
      .filter(([, node]) => node.type === 'array' && node.items?.properties?.ipam !== undefined)
      .map(([field]) => field),
  );
  return [...new Set(fields)].sort();
}

/** The NIC entries of `root` (a machine, or a template's machine spec), as one list: CEL. */
function nicsOf(root: string, lists: readonly string[]): string {
  return lists.flatMap((field) => [`${root}.?spec.?${field}.orValue([])`, `${root}.?spec.?template.?spec.?${field}.orValue([])`]).join(' + ');
}

/** The resource of a kind, as CRDs are named: lower case, plural (flect's rules for the endings pool kinds have). */
const PLURAL = `p.kind.lowerAscii().matches('(s|x|z|ch|sh)$') ? p.kind.lowerAscii() + 'es' : (p.kind.lowerAscii().matches('[^aeiou]y$') ? p.kind.lowerAscii().substring(0, size(p.kind) - 1) + 'ies' : p.kind.lowerAscii() + 's')`;

export function ipPoolPolicy(): ValidatingPolicyProps {
  const lists = poolAddressedLists();
  const clusterScoped = CLUSTER_SCOPED_POOL_KINDS.map((k) => `(p.apiGroup == ${celString(k.apiGroup)} && p.kind == ${celString(k.kind)})`).join(' || ');
  const pool = `authorizer.group(p.apiGroup).resource(${PLURAL})`;
  const gettable = `((${clusterScoped}) ? ${pool}.name(p.name).check('get').allowed() : ${pool}.namespace(request.namespace).name(p.name).check('get').allowed())`;
  // No namespace: only a cluster-wide grant counts.
  const mayUseAnyPool = `authorizer.group(${celString(INFRA_GROUP)}).resource(request.resource.resource).subresource(${celString(IP_POOLS_SUBRESOURCE)}).check(${celString(IP_POOLS_VERB)}).allowed()`;
  const kept = 'variables.oldPools.exists(l, p in l)';
  const withPools = 'n, has(n.ipam) && has(n.ipam.addressesFromPools)';
  const named = "p.kind + ' \"' + p.name + '\"'";
  return {
    apiGroups: [INFRA_GROUP],
    resources: [...INFRA_MACHINE_KINDS, ...INFRA_MACHINE_TEMPLATE_KINDS].map((k) => k.plural),
    operations: ['CREATE', 'UPDATE'],
    variables: [
      { name: 'oldNics', expression: `request.operation == 'UPDATE' ? ${nicsOf('oldObject', lists)} : []` },
      { name: 'oldPools', expression: `variables.oldNics.filter(${withPools}).map(n, n.ipam.addressesFromPools)` },
      // The pools this request adds, each NIC's as one list (lists of lists: CEL of Kubernetes 1.30 cannot flatten).
      { name: 'added', expression: `(${nicsOf('object', lists)}).filter(${withPools}).map(n, n.ipam.addressesFromPools.filter(p, !(${kept})))` },
    ],
    validations: [
      {
        expression: `${mayUseAnyPool} || variables.added.all(l, l.all(p, ${gettable}))`,
        message: 'addressesFromPools: you may not take addresses from a pool you cannot get',
        // A message may not ask the authorizer: it names every pool the request adds.
        messageExpression:
          `${celString('addressesFromPools: you may not take addresses from a pool you cannot get (of ')} + ` +
          `variables.added.filter(l, size(l) > 0).map(l, l.map(p, ${named}).join(', ')).join(', ') + ` +
          `${celString('): banlieue would claim the address for you; a cluster-scoped pool needs a cluster-wide grant')}`,
      },
    ],
  };
}
