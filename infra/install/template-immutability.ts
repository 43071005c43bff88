// Template specs are immutable, as the CAPI contract asks of every
// InfraMachineTemplate and InfraClusterTemplate: Machines are cloned from a
// template, so changing one in place would leave running machines out of step
// with it. A CRD rule (`self == oldSelf`) cannot carry this: CAPI's topology
// controller learns whether a ClusterClass change touches a template by a
// server-side-apply dry run of the new spec on the existing object, marked
// with the topology.cluster.x-k8s.io/dry-run annotation, which providers'
// admission lets through (CAPI util/topology IsDryRunRequest); CEL in the
// schema sees neither the annotation's purpose nor that the request is a dry
// run, and would refuse it, so a changed ClusterClass would never roll out.
// Part of the API, not an optional policy: installed with the CRDs.
import { Construct } from 'constructs';
import { INFRA_GROUP } from '../api/kind.js';
import { INFRA_CLUSTER_TEMPLATE_KINDS, INFRA_MACHINE_TEMPLATE_KINDS } from '../api/kinds.js';
import { Annotation } from '../api/well-known.js';
import { celString, ValidatingPolicy, type ValidatingPolicyProps } from './validating-policy.js';

export const TEMPLATE_IMMUTABILITY_POLICY = 'banlieue-template-immutability';

/**
 * An UPDATE may change a template's metadata but not its spec, unless it is
 * CAPI's topology dry run: a dry-run request (nothing is stored) whose object
 * carries the dry-run annotation. Either alone is not enough: the annotation on
 * a real write, or a user's plain dry run, is refused like any change.
 */
export function templateImmutabilityPolicy(): ValidatingPolicyProps {
  const kinds = [...INFRA_MACHINE_TEMPLATE_KINDS, ...INFRA_CLUSTER_TEMPLATE_KINDS];
  const annotated = `object.metadata.?annotations[?${celString(Annotation.capiTopologyDryRun)}].hasValue()`;
  return {
    apiGroups: [INFRA_GROUP],
    // The plurals alone: the status subresource (capacity, written by the provider) is not spec.
    resources: kinds.map((k) => k.plural),
    operations: ['UPDATE'],
    matchConditions: [{ name: 'not-a-topology-dry-run', expression: `!(has(request.dryRun) && request.dryRun && ${annotated})` }],
    validations: [
      {
        expression: 'object.spec == oldObject.spec',
        message: 'spec is immutable: create a new template and point its users (MachineDeployment, ClusterClass) at it',
        messageExpression:
          `'spec of ' + request.kind.kind + ' ' + request.namespace + '/' + request.name + ` +
          `${celString(' is immutable: create a new template and point its users (MachineDeployment, ClusterClass) at it')}`,
      },
    ],
  };
}

export class TemplateImmutability extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    new ValidatingPolicy(this, TEMPLATE_IMMUTABILITY_POLICY, templateImmutabilityPolicy());
  }
}
