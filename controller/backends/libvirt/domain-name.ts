// The name a LibvirtMachine's domain gets when its spec names none:
// <namespace>-<name>. Kubernetes names run to 253 characters and namespaces
// to 63, beyond what libvirt can name files after: a longer one
// is cut and ended by a hash of the whole, so it stays the same on every
// pass and two machines cut alike still get two names. The domain is found
// by its UUID, never by this name.
import { boundedName } from '../../../infra/api/bounded-name.js';
import { LIBVIRT_MAX_DOMAIN_NAME_LENGTH } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';

export const defaultDomainName = (namespace: string, name: string): string => boundedName(`${namespace}-${name}`, LIBVIRT_MAX_DOMAIN_NAME_LENGTH);
