// Who may write a VMImage's per-Provider rows (status.perProvider): whoever may
// update that Provider's status. VMImages are cluster-scoped and their status
// is one subresource, so RBAC gives every provider identity every row; a row's
// resolvedRef decides what new VMs on that Provider clone. A Cloud Hypervisor
// host's identity may update its own Provider's status only (docs/adr/0017), so
// it writes its own rows only; the in-cluster provider roles and admins, who may
// update every Provider's status, write any (the policy does not look at their
// requests). Rows a request leaves as they were are not asked about, so the
// controller's conditions pass as before.
import { CORE_GROUP } from '../api/kind.js';
import { celString, type ValidatingPolicyProps } from './validating-policy.js';

export function imageRowsPolicy(): ValidatingPolicyProps {
  const providerStatus = `authorizer.group(${celString(CORE_GROUP)}).resource('providers').subresource('status')`;
  return {
    apiGroups: [CORE_GROUP],
    resources: ['vmimages/status'],
    operations: ['UPDATE'],
    // Only identities that may not update every Provider's status (a host's, the controller's): an authorizer
    // check costs most of a CEL expression's budget, so the others are not asked about each row.
    matchConditions: [{ name: 'not-every-provider-status', expression: `!${providerStatus}.check('update').allowed()` }],
    variables: [
      { name: 'oldRows', expression: 'oldObject.?status.?perProvider.orValue([])' },
      { name: 'newRows', expression: 'object.?status.?perProvider.orValue([])' },
      // Rows the request adds, changes or removes.
      {
        name: 'written',
        expression: 'variables.newRows.filter(r, !(r in variables.oldRows)) + variables.oldRows.filter(r, !(r in variables.newRows))',
      },
    ],
    validations: [
      {
        expression: `variables.written.all(r, ${providerStatus}.namespace(r.providerNamespace).name(r.providerName).check('update').allowed())`,
        message: "status.perProvider: a row is written only by who may update its Provider's status",
        messageExpression:
          `${celString("status.perProvider: a row is written only by who may update its Provider's status; ")} + request.userInfo.username + ` +
          `${celString(' writes the rows of ')} + variables.written.map(r, r.providerNamespace + '/' + r.providerName).join(', ')`,
      },
    ],
  };
}
