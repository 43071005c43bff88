// Who may change a Provider that exists: whoever could have made it. Machines,
// VirtualMachines and CAPI templates follow a Provider by its name, so changing
// what it points at (its spec), making it go (a deletion, its finalizer taken off,
// an owner reference the garbage collector follows) and re-creating it under its
// name would send the admin's machines, with their user-data and bootstrap
// Secrets, wherever the requester points it: at a vCenter of their own, with
// credentials of their own, which the reference check admits. A Provider is its
// credentials' owner's: whoever may get its credentials Secret can drive the
// backend directly anyway. A Provider without one (a Cloud Hypervisor host's,
// docs/adr/0017) is its host's and the admins': whoever may update its status
// (docs/adr/0026).
import { CORE_GROUP } from '../api/kind.js';
import { ProviderSpec } from '../api/banlieue.io/v1alpha1/provider.js';
import { celPath, celString, type Validation, type ValidatingPolicyProps } from './validating-policy.js';

/** What anyone who may patch a Provider may change on it: these spec fields, and metadata labels and annotations. */
export const PROVIDER_TENANT_SPEC_FIELDS: readonly string[] = ['paused'];

/** CEL variables and the validation that keep a Provider to its owner (UPDATE and DELETE). */
export interface OwnerGate {
  readonly variables: NonNullable<ValidatingPolicyProps['variables']>;
  readonly validation: Validation;
}

/** `a.f` and `b.f` are both unset or equal. */
const same = (a: string, b: string, field: string): string =>
  `(has(${a}.${field}) == has(${b}.${field}) && (!has(${a}.${field}) || ${a}.${field} == ${b}.${field}))`;

/** The spec fields only a Provider's owner may change: every field but PROVIDER_TENANT_SPEC_FIELDS, from the schema. */
export function providerOwnerSpecFields(): string[] {
  return Object.keys(ProviderSpec.properties).filter((f) => !PROVIDER_TENANT_SPEC_FIELDS.includes(f));
}

export function providerOwnerGate(): OwnerGate {
  const specChanged = providerOwnerSpecFields().map((f) => `!${same('object.spec', 'oldObject.spec', f)}`);
  const ownersChanged = `!${same('object.metadata', 'oldObject.metadata', 'ownerReferences')}`;
  const finalizerRemoved =
    'has(oldObject.metadata.finalizers) && oldObject.metadata.finalizers.exists(f, !has(object.metadata.finalizers) || !(f in object.metadata.finalizers))';
  // A namespace being deleted takes the Provider with its credentials Secret: nothing to re-create it in.
  const namespaceGoing = 'has(namespaceObject.metadata.deletionTimestamp)';
  const secretGettable = `authorizer.group('').resource('secrets').namespace(request.namespace).name(variables.ownerCredentials).check('get').allowed()`;
  const statusWritable = `authorizer.group(${celString(CORE_GROUP)}).resource('providers').subresource('status').namespace(request.namespace).name(request.name).check('update').allowed()`;
  const what = 'change it beyond labels, annotations and spec.paused, remove its finalizers, give it owners or delete it';
  return {
    variables: [
      {
        name: 'ownerCredentials',
        expression: `request.operation == 'CREATE' ? '' : ${celPath('oldObject', ['spec', 'connection', 'credentialsRef', 'name'])}`,
      },
      {
        name: 'ownerChange',
        expression: `request.operation == 'DELETE' ? !${namespaceGoing} : request.operation == 'UPDATE' && (${[...specChanged, ownersChanged, `(${finalizerRemoved})`].join(' || ')})`,
      },
      { name: 'ownerAllowed', expression: `variables.ownerCredentials != '' ? ${secretGettable} : ${statusWritable}` },
    ],
    validation: {
      expression: '!variables.ownerChange || variables.ownerAllowed',
      message: `only who may get a Provider's credentials Secret (or, without one, update its status) may ${what}`,
      messageExpression:
        `'Provider ' + request.name + (variables.ownerCredentials != '' ? ` +
        `${celString(': only who may get its credentials Secret "')} + variables.ownerCredentials + ${celString('" may')} : ` +
        `${celString(' has no credentials Secret: only who may update its status (its host, an admin) may')}) + ` +
        `${celString(` ${what}; `)} + request.userInfo.username + ${celString(' may not')}`,
    },
  };
}
