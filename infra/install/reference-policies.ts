// Every field that names a Secret or ConfigMap banlieue will read, and the
// confused-deputy rule for all of them: the requester must be allowed to `get`
// the object they point banlieue at. banlieue's roles may read any Secret they
// are granted; without this rule, whoever may create a Provider, a
// VirtualMachine, a machine or a CAPI Machine could have banlieue send a
// Secret they cannot read to an endpoint or into a VM they control.
import { CORE_GROUP, INFRA_GROUP } from '../api/kind.js';
import { INFRA_MACHINE_KINDS, INFRA_MACHINE_TEMPLATE_KINDS } from '../api/kinds.js';
import { celPath, celString, type ValidatingPolicyProps } from './validating-policy.js';

/** One field naming a Secret or ConfigMap in the object's own namespace. */
export interface ObjectReference {
  /** The field as users write it, for messages: spec.connection.credentialsRef. */
  readonly field: string;
  /** Path to the referenced object's name. */
  readonly namePath: readonly string[];
  readonly resource: 'secrets' | 'configmaps';
}

export interface ReferencePolicy {
  /** Policy (and binding) name. */
  readonly name: string;
  readonly apiGroup: string;
  readonly resources: readonly string[];
  readonly references: readonly ObjectReference[];
  /**
   * CEL, on UPDATE: when true, every reference is checked again even if its
   * name did not change. A Provider's connection: moving the endpoint moves
   * where the credentials go, which is as good as reading them.
   * @default only a reference whose name changed is checked
   */
  readonly recheckWhen?: string;
  /** Requests this policy is about (e.g. only CAPI objects that use banlieue). */
  readonly matchConditions?: ValidatingPolicyProps['matchConditions'];
}

const KIND_OF = { secrets: 'Secret', configmaps: 'ConfigMap' } as const;
const ref = (field: string, resource: ObjectReference['resource']): ObjectReference => ({ field, namePath: [...field.split('.'), 'name'], resource });
const dataSecret = (field: string): ObjectReference => ({ field, namePath: field.split('.'), resource: 'secrets' });

/** A CAPI object whose infrastructure is ours (v1beta2 infrastructureRef.apiGroup, v1beta1 .apiVersion). */
function infrastructureIsBanlieue(prefix: readonly string[]): string {
  const infraRef = [...prefix, 'infrastructureRef'];
  return `${celPath('object', [...infraRef, 'apiGroup'])} == ${celString(INFRA_GROUP)} || ${celPath('object', [...infraRef, 'apiVersion'])}.startsWith(${celString(`${INFRA_GROUP}/`)})`;
}

export const REFERENCE_POLICIES: readonly ReferencePolicy[] = [
  {
    name: 'banlieue-provider-references',
    apiGroup: CORE_GROUP,
    resources: ['providers'],
    references: [
      ref('spec.connection.credentialsRef', 'secrets'),
      ref('spec.connection.caBundle.secretRef', 'secrets'),
      ref('spec.connection.caBundle.configMapRef', 'configmaps'),
    ],
    recheckWhen: 'object.spec.connection != oldObject.spec.connection',
  },
  {
    name: 'banlieue-virtualmachine-references',
    apiGroup: CORE_GROUP,
    resources: ['virtualmachines'],
    references: [ref('spec.userData.secretRef', 'secrets'), ref('spec.userData.configMapRef', 'configmaps')],
  },
  {
    // Hand-written machines, and the ones CAPI clones (CAPI's manager may read every
    // Secret, so the template is where its author is checked).
    name: 'banlieue-inframachine-references',
    apiGroup: INFRA_GROUP,
    resources: [...INFRA_MACHINE_KINDS, ...INFRA_MACHINE_TEMPLATE_KINDS].map((k) => k.plural),
    references: [ref('spec.userDataSecretRef', 'secrets'), ref('spec.template.spec.userDataSecretRef', 'secrets')],
  },
  {
    // A banlieue machine without userDataSecretRef boots with its CAPI Machine's bootstrap
    // data Secret, which the Machine (or the MachineSet/-Deployment/-Pool template it is
    // cloned from) names.
    name: 'banlieue-capi-bootstrap-references',
    apiGroup: 'cluster.x-k8s.io',
    resources: ['machines', 'machinesets', 'machinedeployments', 'machinepools'],
    references: [dataSecret('spec.bootstrap.dataSecretName'), dataSecret('spec.template.spec.bootstrap.dataSecretName')],
    matchConditions: [
      {
        name: 'uses-banlieue-infrastructure',
        expression: `${infrastructureIsBanlieue(['spec'])} || ${infrastructureIsBanlieue(['spec', 'template', 'spec'])}`,
      },
    ],
  },
];

/** The policy enforcing one ReferencePolicy: one validation per reference. */
export function toReferencePolicy(policy: ReferencePolicy): ValidatingPolicyProps {
  const variables = policy.references.flatMap((r, i) => [
    { name: `ref${i}`, expression: celPath('object', r.namePath) },
    { name: `old${i}`, expression: `request.operation == 'UPDATE' ? ${celPath('oldObject', r.namePath)} : ''` },
  ]);
  const recheck = policy.recheckWhen ? [{ name: 'recheck', expression: `request.operation == 'UPDATE' && (${policy.recheckWhen})` }] : [];
  return {
    apiGroups: [policy.apiGroup],
    resources: policy.resources,
    operations: ['CREATE', 'UPDATE'],
    ...(policy.matchConditions ? { matchConditions: policy.matchConditions } : {}),
    variables: [...variables, ...recheck],
    validations: policy.references.map((r, i) => {
      const name = `variables.ref${i}`;
      const kind = KIND_OF[r.resource];
      const unchanged = `${name} == variables.old${i}${recheck.length > 0 ? ' && !variables.recheck' : ''}`;
      const gettable = `authorizer.group('').resource(${celString(r.resource)}).namespace(request.namespace).name(${name}).check('get').allowed()`;
      return {
        expression: `${name} == '' || (${unchanged}) || ${gettable}`,
        message: `${r.field}: you may not reference a ${kind} you cannot get`,
        messageExpression: `${celString(`${r.field}: you may not reference ${kind} "`)} + ${name} + ${celString(`": you cannot get it (banlieue would read it for you)`)}`,
      };
    }),
  };
}
