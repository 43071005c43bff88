// Names that reach a guest. banlieue writes them into cloud-init user-data,
// metadata and netplan, and netplan copies them on into networkd and udev files,
// so the schema holds them to grammars without a character that could end a
// line, a YAML scalar or a shell word: a domain with a newline would add a
// cloud-config key, an interface named `$(reboot)` would reach netplan.
// The API server checks an object only when it is written, so the renderers
// check again with the is* predicates below, which accept what older objects
// may hold (upper case, longer interface names) but no other character.

/** DNS-1123 subdomain, as Kubernetes names objects: lower-case alphanumeric labels with inner '-', joined by '.'. */
import { isIP } from 'node:net';
import { Type } from './schema.js';

export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** DNS-1123 label: one label of a subdomain, as a failure domain name (and its `name` label value) is. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** A Linux interface name: at most 15 bytes (IFNAMSIZ with its NUL), no '/', ':' or whitespace, not '.' or '..'. */
export const INTERFACE_NAME_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,14}$';

/** A DNS domain or host name that reaches a guest (search domain, FQDN part). */
export function DnsSubdomain(description: string): ReturnType<typeof Type.String> {
  return Type.String({ description, minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN });
}

/** An interface name the guest is given (netplan `set-name`). */
export function InterfaceName(description: string): ReturnType<typeof Type.String> {
  return Type.String({ description, minLength: 1, maxLength: 15, pattern: INTERFACE_NAME_PATTERN });
}

const DNS_NAME = new RegExp(DNS_SUBDOMAIN_PATTERN, 'i');
const INTERFACE_NAME = new RegExp(INTERFACE_NAME_PATTERN);
const INTERFACE_ID = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const IP_CHARACTERS = /^[0-9a-fA-F.:]+$/;

/** Whether a renderer may write `value` as a DNS name: DNS_SUBDOMAIN_PATTERN in either case, of any length. */
export function isDnsName(value: string): boolean {
  return DNS_NAME.test(value);
}

/** Whether `value` fits INTERFACE_NAME_PATTERN, i.e. the guest can give an interface this name. */
export function isInterfaceName(value: string): boolean {
  return INTERFACE_NAME.test(value);
}

/**
 * Whether a renderer may write `value` where an interface name goes (a netplan ID):
 * INTERFACE_NAME_PATTERN's characters, of any length, since classes written before
 * the pattern allowed 63 characters (such a name is an ID, never a `set-name`).
 */
export function isInterfaceId(value: string): boolean {
  return INTERFACE_ID.test(value);
}

/** Whether `value` is an IPv4 or IPv6 address (node:net isIP) of hex digits, '.' and ':' only: no zone, as the schema's CEL `isIP`. */
export function isIpAddress(value: string): boolean {
  return IP_CHARACTERS.test(value) && isIP(value) !== 0;
}

const IPV4_OR_V6 = 'isIP(self)';

export function IpAddress(description: string): ReturnType<typeof Type.String> {
  return Type.String({
    description,
    maxLength: 45,
    'x-kubernetes-validations': [{ rule: IPV4_OR_V6, message: 'must be an IPv4 or IPv6 address' }],
  });
}
