// The ValidatingAdmissionPolicies that keep tenants from using banlieue as a
// deputy (Kubernetes 1.30+), on by default (BanlieueInstallProps.admissionPolicies,
// docs/adr/0015): rules the schema cannot state because they depend on who is
// asking, or on the namespace.
import { Construct } from 'constructs';
import { CORE_GROUP, INFRA_GROUP } from '../api/kind.js';
import { INFRA_MACHINE_KINDS } from '../api/kinds.js';
import { insecureTransportPolicy } from './insecure-transport-policy.js';
import { imageRowsPolicy } from './image-rows-policy.js';
import { ipPoolPolicy } from './ip-pool-policy.js';
import { REFERENCE_POLICIES, toReferencePolicy } from './reference-policies.js';
import { PROVIDER_ID_SUBRESOURCE, PROVIDER_ID_VERB } from './rbac-rules.js';
import { celPath, celString, ValidatingPolicy, type ValidatingPolicyProps } from './validating-policy.js';

/**
 * Namespace label with which a cluster admin lets the Providers of that
 * namespace skip TLS verification. On the namespace, not the Provider: whoever
 * writes a Provider must not be the one who decides its endpoint need not be
 * authenticated (a tenant endpoint would then receive the credentials).
 */
export const ALLOW_INSECURE_TLS_LABEL = 'banlieue.io/allow-insecure-tls';

/** insecureSkipTLSVerify: true only in a namespace labelled ALLOW_INSECURE_TLS_LABEL=true. */
export function insecureTlsPolicy(): ValidatingPolicyProps {
  const insecure = celPath('object', ['spec', 'connection', 'insecureSkipTLSVerify'], 'false');
  const optedIn = `namespaceObject.?metadata.?labels[?${celString(ALLOW_INSECURE_TLS_LABEL)}].orValue('') == 'true'`;
  return {
    apiGroups: [CORE_GROUP],
    resources: ['providers'],
    operations: ['CREATE', 'UPDATE'],
    validations: [
      {
        expression: `!${insecure} || ${optedIn}`,
        message: `spec.connection.insecureSkipTLSVerify needs the namespace labelled ${ALLOW_INSECURE_TLS_LABEL}=true by a cluster admin`,
        messageExpression: `${celString('spec.connection.insecureSkipTLSVerify needs namespace "')} + request.namespace + ${celString(`" labelled ${ALLOW_INSECURE_TLS_LABEL}=true by a cluster admin; or trust the endpoint with spec.connection.caBundle`)}`,
      },
    ],
  };
}

/**
 * spec.providerID of every InfraMachine kind may be set or changed only by an
 * identity allowed to `update` the virtual subresource `<plural>/providerid`:
 * the kind's provider role (its ClusterRole grants it) and cluster admins
 * (wildcard), which covers `clusterctl move` (it creates the moved machines
 * with spec.providerID set, as the admin; it puts no marker on what it
 * creates). Anyone else would point a machine at a VM banlieue did not create
 * for it.
 */
export function providerIDPolicy(): ValidatingPolicyProps {
  const roles = INFRA_MACHINE_KINDS.map((k) => `${celString(k.plural)}: ${celString(k.kind)}`).join(', ');
  const mayWrite = `authorizer.group(${celString(INFRA_GROUP)}).resource(request.resource.resource).subresource(${celString(PROVIDER_ID_SUBRESOURCE)}).namespace(request.namespace).check(${celString(PROVIDER_ID_VERB)}).allowed()`;
  return {
    apiGroups: [INFRA_GROUP],
    resources: INFRA_MACHINE_KINDS.map((k) => k.plural),
    operations: ['CREATE', 'UPDATE'],
    variables: [
      { name: 'providerID', expression: celPath('object', ['spec', 'providerID']) },
      { name: 'oldProviderID', expression: `request.operation == 'UPDATE' ? ${celPath('oldObject', ['spec', 'providerID'])} : ''` },
    ],
    validations: [
      {
        expression: `variables.providerID == variables.oldProviderID || ${mayWrite}`,
        message: "spec.providerID is written by banlieue's provider role; you may not set or change it",
        messageExpression:
          `'spec.providerID of a ' + {${roles}}[request.resource.resource] + ` +
          `${celString(" is written by banlieue's provider role: ")} + request.userInfo.username + ` +
          `${celString(` may not set or change it (it needs ${PROVIDER_ID_VERB} on `)} + request.resource.resource + ${celString(`/${PROVIDER_ID_SUBRESOURCE})`)}`,
      },
    ],
  };
}

/** Every optional policy; the controller's Secret guard is not one of them (ControllerSecretGuard). */
export class AdmissionPolicies extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    for (const policy of REFERENCE_POLICIES) new ValidatingPolicy(this, policy.name, toReferencePolicy(policy));
    new ValidatingPolicy(this, 'banlieue-provider-insecure-tls', insecureTlsPolicy());
    new ValidatingPolicy(this, 'banlieue-provider-insecure-transport', insecureTransportPolicy());
    new ValidatingPolicy(this, 'banlieue-inframachine-ip-pools', ipPoolPolicy());
    new ValidatingPolicy(this, 'banlieue-inframachine-provider-id', providerIDPolicy());
    new ValidatingPolicy(this, 'banlieue-vmimage-rows', imageRowsPolicy());
  }
}
