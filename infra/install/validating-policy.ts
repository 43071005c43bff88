// One ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, Kubernetes
// 1.30+) and its Deny binding: the shape every banlieue policy shares.
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { clusterScoped } from './cluster-scoped.js';
import { componentLabels } from './labels.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface Validation {
  /** CEL; true admits. */
  readonly expression: string;
  /** Said when messageExpression cannot be evaluated. */
  readonly message: string;
  /** CEL building the message from the request (names the field and the object). */
  readonly messageExpression?: string;
}

export interface ValidatingPolicyProps {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly operations: readonly Operation[];
  /** CEL preconditions: a request that fails one is not this policy's business. */
  readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
  /** Named CEL values the validations read as `variables.<name>`, in order. */
  readonly variables?: readonly { readonly name: string; readonly expression: string }[];
  readonly validations: readonly Validation[];
}

/** The policy and its binding, both named `id` (a banlieue-… name), refusing (Deny) what fails. */
export class ValidatingPolicy extends Construct {
  constructor(scope: Construct, id: string, props: ValidatingPolicyProps) {
    super(scope, id);
    const labels = componentLabels('admission');
    clusterScoped(
      new kplus.k8s.KubeValidatingAdmissionPolicy(this, 'policy', {
        metadata: { name: id, labels },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [{ apiGroups: [...props.apiGroups], apiVersions: ['*'], operations: [...props.operations], resources: [...props.resources] }],
          },
          ...(props.matchConditions ? { matchConditions: props.matchConditions.map((c) => ({ ...c })) } : {}),
          ...(props.variables ? { variables: props.variables.map((v) => ({ ...v })) } : {}),
          validations: props.validations.map((v) => ({ ...v })),
        },
      }),
    );
    clusterScoped(
      new kplus.k8s.KubeValidatingAdmissionPolicyBinding(this, 'binding', {
        metadata: { name: id, labels },
        spec: { policyName: id, validationActions: ['Deny'] },
      }),
    );
  }
}

/**
 * `root.?a.?b.orValue(fallback)` (CEL optional field selection): the value at a
 * path that may be absent at any level, without a has() per level.
 */
export function celPath(root: string, path: readonly string[], fallback = "''"): string {
  return `${root}${path.map((p) => `.?${p}`).join('')}.orValue(${fallback})`;
}

/** A single-quoted CEL string literal (the values are ours: names, never user input). */
export const celString = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
