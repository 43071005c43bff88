// Endpoints a provider pod would reach over a transport that neither authenticates the far
// end nor encrypts (the backend list marks such schemes `unprotected`, e.g. a driver over
// libvirt's tcp): whoever answers at that address gets the provider's calls (and may play a
// host), and the traffic, domain definitions and user-data seeds included, crosses the
// network in the clear. As with skipping TLS verification (ALLOW_INSECURE_TLS_LABEL), a
// cluster admin opts a namespace in with a label: the writer of a Provider cannot decide it.
import { BACKEND_APIS } from '../api/backends.js';
import { CORE_GROUP } from '../api/kind.js';
import { celPath, celString, type ValidatingPolicyProps } from './validating-policy.js';

/** Namespace label with which a cluster admin lets the Providers of that namespace use a transport without authentication or encryption. */
export const ALLOW_INSECURE_TRANSPORT_LABEL = 'banlieue.io/allow-insecure-transport';

/** The schemes of every backend whose transport is unprotected. */
export function unprotectedSchemes(): string[] {
  return [...new Set(BACKEND_APIS.flatMap((b) => b.endpoint.schemes.filter((s) => s.unprotected).map((s) => s.scheme)))].sort();
}

/** An endpoint over an unprotected transport only in a namespace labelled ALLOW_INSECURE_TRANSPORT_LABEL=true. */
export function insecureTransportPolicy(): ValidatingPolicyProps {
  const schemes = unprotectedSchemes();
  const endpoint = celPath('object', ['spec', 'connection', 'endpoint']);
  // The API admits the schemes as the backend list spells them, in lower case.
  const unprotected = schemes.map((s) => `${endpoint}.startsWith(${celString(`${s}://`)})`).join(' || ');
  const optedIn = `namespaceObject.?metadata.?labels[?${celString(ALLOW_INSECURE_TRANSPORT_LABEL)}].orValue('') == 'true'`;
  const what = `a transport without authentication or encryption (${schemes.join(', ')})`;
  return {
    apiGroups: [CORE_GROUP],
    resources: ['providers'],
    operations: ['CREATE', 'UPDATE'],
    validations: [
      {
        expression: schemes.length === 0 ? 'true' : `!(${unprotected}) || ${optedIn}`,
        message: `spec.connection.endpoint over ${what} needs the namespace labelled ${ALLOW_INSECURE_TRANSPORT_LABEL}=true by a cluster admin`,
        messageExpression: `${celString(`spec.connection.endpoint over ${what} needs namespace "`)} + request.namespace + ${celString(`" labelled ${ALLOW_INSECURE_TRANSPORT_LABEL}=true by a cluster admin; or use a transport with TLS or SSH`)}`,
      },
    ],
  };
}
