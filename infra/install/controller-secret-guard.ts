// The controller must create and patch the rendered user-data Secrets in
// every VM namespace, and RBAC cannot narrow that by type or name: as RBAC
// alone, its identity could overwrite a Secret in kube-system or mint a token
// for any ServiceAccount (a kubernetes.io/service-account-token Secret the
// token controller fills). This policy narrows it to banlieue's own Secrets.
// It is part of the controller's least privilege, installed even when the
// optional admission policies are not (docs/adr/0015).
import { Construct } from 'constructs';
import { SecretType } from '../api/well-known.js';
import { celString, ValidatingPolicy, type ValidatingPolicyProps } from './validating-policy.js';

/** Namespaces (by prefix) the controller never writes a Secret in. */
export const SYSTEM_NAMESPACE_PREFIX = 'kube-';

export interface ControllerSecretGuardProps {
  /** Install namespace, where the controller's ServiceAccount lives. */
  readonly namespace: string;
  /** The controller's ServiceAccount name. */
  readonly serviceAccount: string;
}

export function controllerSecretGuardPolicy(props: ControllerSecretGuardProps): ValidatingPolicyProps {
  const username = `system:serviceaccount:${props.namespace}:${props.serviceAccount}`;
  const typeOf = (root: string): string => `${root}.?type.orValue('')`;
  return {
    apiGroups: [''],
    resources: ['secrets'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    matchConditions: [{ name: 'controller-identity', expression: `request.userInfo.username == ${celString(username)}` }],
    validations: [
      {
        expression: `!request.namespace.startsWith(${celString(SYSTEM_NAMESPACE_PREFIX)})`,
        message: `${props.serviceAccount} may not write Secrets in ${SYSTEM_NAMESPACE_PREFIX}* namespaces`,
      },
      {
        // Said on its own so that an attempt reads as what it is.
        expression: `request.operation == 'DELETE' || ${typeOf('object')} != 'kubernetes.io/service-account-token'`,
        message: `${props.serviceAccount} may not write ServiceAccount token Secrets`,
      },
      {
        // Both sides of an UPDATE (a Secret's type is immutable, but say so anyway), the old
        // one of a DELETE.
        expression:
          `(request.operation == 'DELETE' || ${typeOf('object')} == ${celString(SecretType.userData)}) && ` +
          `(request.operation == 'CREATE' || ${typeOf('oldObject')} == ${celString(SecretType.userData)})`,
        message: `${props.serviceAccount} may write only Secrets of type ${SecretType.userData}`,
      },
    ],
  };
}

export class ControllerSecretGuard extends Construct {
  constructor(scope: Construct, id: string, props: ControllerSecretGuardProps) {
    super(scope, id);
    new ValidatingPolicy(this, 'banlieue-controller-secret-writes', controllerSecretGuardPolicy(props));
  }
}
