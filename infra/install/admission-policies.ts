// Optional ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1,
// Kubernetes 1.30+): rules the schema cannot state because they depend on who
// is asking.
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { CORE_GROUP } from '../api/kind.js';
import { clusterScoped } from './cluster-scoped.js';
import { componentLabels } from './labels.js';

interface Policy {
  readonly name: string;
  readonly resource: string;
  readonly validations: { expression: string; message: string }[];
}

const POLICIES: readonly Policy[] = [
  {
    // Without this, anyone who may create a Provider could make banlieue read
    // a Secret they cannot read themselves (confused deputy).
    name: 'banlieue-provider-credentials-authorization',
    resource: 'providers',
    validations: [
      {
        expression:
          "!has(object.spec.connection.credentialsRef) || authorizer.group('').resource('secrets').namespace(object.metadata.namespace).name(object.spec.connection.credentialsRef.name).check('get').allowed()",
        message: 'you may not reference a credentials Secret you cannot get',
      },
    ],
  },
  {
    name: 'banlieue-virtualmachine-userdata-authorization',
    resource: 'virtualmachines',
    validations: [
      {
        expression:
          "!has(object.spec.userData) || !has(object.spec.userData.secretRef) || authorizer.group('').resource('secrets').namespace(object.metadata.namespace).name(object.spec.userData.secretRef.name).check('get').allowed()",
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
    name: 'banlieue-provider-insecure-tls',
    resource: 'providers',
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
                { apiGroups: [CORE_GROUP], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: [policy.resource] },
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
