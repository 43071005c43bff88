// Optional ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1,
// Kubernetes 1.30+): rules the schema cannot state because they depend on who
// is asking.
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { CORE_GROUP, INFRA_GROUP } from '../api/kind.js';
import { INFRA_MACHINE_KINDS } from '../api/kinds.js';
import { clusterScoped } from './cluster-scoped.js';
import { componentLabels } from './labels.js';

interface Policy {
  readonly name: string;
  readonly apiGroup: string;
  readonly resources: string[];
  readonly validations: { expression: string; message: string }[];
}

const secretGettable = (nameExpr: string): string =>
  `authorizer.group('').resource('secrets').namespace(object.metadata.namespace).name(${nameExpr}).check('get').allowed()`;

const POLICIES: readonly Policy[] = [
  {
    // Without this, anyone who may create a Provider could make banlieue read
    // a Secret they cannot read themselves (confused deputy).
    name: 'banlieue-provider-credentials-authorization',
    apiGroup: CORE_GROUP,
    resources: ['providers'],
    validations: [
      {
        expression: `!has(object.spec.connection.credentialsRef) || ${secretGettable('object.spec.connection.credentialsRef.name')}`,
        message: 'you may not reference a credentials Secret you cannot get',
      },
    ],
  },
  {
    name: 'banlieue-virtualmachine-userdata-authorization',
    apiGroup: CORE_GROUP,
    resources: ['virtualmachines'],
    validations: [
      {
        expression: `!has(object.spec.userData) || !has(object.spec.userData.secretRef) || ${secretGettable('object.spec.userData.secretRef.name')}`,
        message: 'you may not reference a user-data Secret you cannot get',
      },
      {
        expression:
          "!has(object.spec.userData) || !has(object.spec.userData.configMapRef) || authorizer.group('').resource('configmaps').namespace(object.metadata.namespace).name(object.spec.userData.configMapRef.name).check('get').allowed()",
        message: 'you may not reference a user-data ConfigMap you cannot get',
      },
    ],
  },
  {
    // A hand-written (or CAPI-cloned) machine can name a user-data Secret too.
    name: 'banlieue-inframachine-userdata-authorization',
    apiGroup: INFRA_GROUP,
    resources: INFRA_MACHINE_KINDS.map((k) => k.plural),
    validations: [
      {
        expression: `!has(object.spec.userDataSecretRef) || ${secretGettable('object.spec.userDataSecretRef.name')}`,
        message: 'you may not reference a user-data Secret you cannot get',
      },
    ],
  },
  {
    name: 'banlieue-provider-insecure-tls',
    apiGroup: CORE_GROUP,
    resources: ['providers'],
    validations: [
      {
        expression:
          "!has(object.spec.connection.insecureSkipTLSVerify) || !object.spec.connection.insecureSkipTLSVerify || (has(object.metadata.annotations) && 'banlieue.io/allow-insecure-tls' in object.metadata.annotations && object.metadata.annotations['banlieue.io/allow-insecure-tls'] == 'true')",
        message: 'insecureSkipTLSVerify needs the annotation banlieue.io/allow-insecure-tls: "true"',
      },
    ],
  },
];

export class AdmissionPolicies extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    const labels = componentLabels('admission');
    for (const policy of POLICIES) {
      clusterScoped(
        new kplus.k8s.KubeValidatingAdmissionPolicy(this, policy.name, {
          metadata: { name: policy.name, labels },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: {
              resourceRules: [
                { apiGroups: [policy.apiGroup], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: policy.resources },
              ],
            },
            validations: policy.validations,
          },
        }),
      );
      clusterScoped(
        new kplus.k8s.KubeValidatingAdmissionPolicyBinding(this, `${policy.name}-binding`, {
          metadata: { name: policy.name, labels },
          spec: { policyName: policy.name, validationActions: ['Deny'] },
        }),
      );
    }
  }
}
