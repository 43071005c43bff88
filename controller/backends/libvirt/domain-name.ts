// The name a LibvirtMachine's domain gets when its spec names none:
// <namespace>-<name>. Kubernetes names run to 253 characters and namespaces
// to 63, beyond what libvirt can name files after (issue 15): a longer one
// is cut and ended by a hash of the whole, so it stays the same on every
// pass and two machines cut alike still get two names. The domain is found
// by its UUID, never by this name.
import { createHash } from 'node:crypto';
import { LIBVIRT_MAX_DOMAIN_NAME_LENGTH } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';

const HASH_LENGTH = 8;

export function defaultDomainName(namespace: string, name: string): string {
  const whole = `${namespace}-${name}`;
  if (whole.length <= LIBVIRT_MAX_DOMAIN_NAME_LENGTH) return whole;
  const hash = createHash('sha256').update(whole).digest('hex').slice(0, HASH_LENGTH);
  return `${whole.slice(0, LIBVIRT_MAX_DOMAIN_NAME_LENGTH - HASH_LENGTH - 1)}-${hash}`;
}
