// User-data placeholders (docs/adr/0007-user-data-secret.md). Only the names
// below are replaced; any other ${...} is left as written, because user-data is
// often a shell script with its own ${HOME} or ${1}.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { providerIdFor } from '../machine-identity.js';
import { effectiveStaticAddress } from './nic-addressing.js';

export const USER_DATA_PLACEHOLDERS = [
  'VM_NAME',
  'NAMESPACE',
  'FQDN',
  'HOSTNAME',
  'IP',
  'PREFIX',
  'GATEWAY',
  'DNS',
  'DOMAIN',
  'PROVIDER_ID',
] as const;
export type UserDataPlaceholder = (typeof USER_DATA_PLACEHOLDERS)[number];

/** A value per placeholder; an unknown value (e.g. IP under DHCP) is the empty string. */
export type UserDataVars = Readonly<Record<UserDataPlaceholder, string>>;

const PLACEHOLDER = /\$\{([A-Z_]+)\}/g;
const isPlaceholder = (name: string): name is UserDataPlaceholder => (USER_DATA_PLACEHOLDERS as readonly string[]).includes(name);

export function renderUserData(template: string, vars: UserDataVars): string {
  return template.replace(PLACEHOLDER, (whole: string, name: string) => (isPlaceholder(name) ? vars[name] : whole));
}

/**
 * Values for `vm` on `backend`. Addressing comes from the first network
 * override, completed by its class interface (gateway, nameservers, domain).
 * PROVIDER_ID is the providerID the provider role will stamp (machine-identity);
 * empty only for an object without a uid, i.e. one not read from the API.
 */
export function userDataVars(vm: VirtualMachine, vmClass: VMClass, providerIDScheme: string): UserDataVars {
  const name = vm.metadata.name ?? '';
  const first = vm.spec.networkOverrides?.[0];
  const address = first
    ? effectiveStaticAddress(first, vmClass.spec.network.interfaces.find((i) => i.name === first.name))
    : undefined;
  const domain = address?.domain ?? '';
  const uid = vm.metadata.uid;
  return {
    VM_NAME: name,
    NAMESPACE: vm.metadata.namespace ?? '',
    FQDN: domain ? `${name}.${domain}` : name,
    HOSTNAME: name,
    IP: address?.address ?? '',
    PREFIX: address ? String(address.prefix) : '',
    GATEWAY: address?.gateway ?? '',
    DNS: (address?.nameservers ?? []).join(','),
    DOMAIN: domain,
    PROVIDER_ID: uid ? providerIdFor(providerIDScheme, uid) : '',
  };
}
