// PVE's named string formats (PVE::JSONSchema register_format), as far as the
// simulator checks them: the ones on the calls banlieue makes, with PVE's
// wording. A format not listed is accepted and remembered (uncheckedFormats),
// so a test can tell what was not verified.
import { isIP, isIPv4, isIPv6 } from 'node:net';

/** An error message, or undefined when the value is fine. */
export type FormatCheck = (value: string) => string | undefined;

const regex =
  (pattern: RegExp, message: (value: string) => string): FormatCheck =>
  (value) =>
    pattern.test(value) ? undefined : message(value);

const DNS_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const STORAGE_ID = '[a-z][a-z0-9\\-_.]*[a-z0-9]';

function cidr(version: 4 | 6 | 0): FormatCheck {
  return (value) => {
    const [address = '', prefix, ...rest] = value.split('/');
    const max = isIPv4(address) ? 32 : 128;
    const okAddress = version === 4 ? isIPv4(address) : version === 6 ? isIPv6(address) : isIP(address) !== 0;
    const okPrefix = prefix !== undefined && /^\d{1,3}$/.test(prefix) && Number(prefix) <= max;
    return okAddress && okPrefix && rest.length === 0 ? undefined : `value does not look like a valid CIDR network`;
  };
}

const ipv4: FormatCheck = (value) => (isIPv4(value) ? undefined : `value does not look like a valid IPv4 address`);
const ipv6: FormatCheck = (value) => (isIPv6(value) ? undefined : `value does not look like a valid IPv6 address`);
const volumeId = regex(new RegExp(`^(${STORAGE_ID}):(.+)$`, 'i'), (v) => `unable to parse volume ID '${v}'`);

/** The sub-keys of PVE's registered property-string formats used by banlieue (qemu-server, pve-common). */
export const PROPERTY_STRING_FORMATS: Readonly<Record<string, Readonly<Record<string, FormatCheck | 'string' | 'boolean'>>>> = {
  // qemu-server PVE/QemuServer/Cloudinit: ip=<cidr>|dhcp, ip6=<cidr>|dhcp|auto, gw, gw6.
  'pve-qm-ipconfig': {
    ip: (v) => (v === 'dhcp' ? undefined : cidr(4)(v)),
    gw: ipv4,
    ip6: (v) => (v === 'dhcp' || v === 'auto' ? undefined : cidr(6)(v)),
    gw6: ipv6,
  },
  'pve-qm-smbios1': {
    uuid: regex(/^[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}$/, () => 'value does not look like a valid UUID'),
    base64: 'boolean',
    family: 'string',
    manufacturer: 'string',
    product: 'string',
    serial: 'string',
    sku: 'string',
    version: 'string',
  },
  'pve-qm-cicustom': { meta: volumeId, network: volumeId, user: volumeId, vendor: volumeId },
};

const NAMED: Readonly<Record<string, FormatCheck>> = {
  'pve-node': regex(new RegExp(`^${DNS_LABEL}$`), () => 'value does not look like a valid node name'),
  'pve-vmid': regex(/^[1-9][0-9]{2,8}$/, () => 'value does not look like a valid VM ID'),
  'pve-configid': regex(/^[a-z][a-z0-9_-]+$/i, (v) => `invalid configuration ID '${v}'`),
  'pve-storage-id': regex(new RegExp(`^${STORAGE_ID}$`, 'i'), (v) => `storage ID '${v}' contains illegal characters`),
  'pve-bridge-id': regex(/^[-_.\w\d]+$/, (v) => `invalid bridge ID '${v}'`),
  'pve-iface': regex(/^[a-zA-Z][a-zA-Z0-9_.-]*$/, (v) => `invalid network interface name '${v}'`),
  'pve-poolid': regex(/^[A-Za-z0-9_\-/]+$/, (v) => `invalid pool ID '${v}'`),
  'pve-userid': regex(/^[^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+$/, (v) => `value '${v}' does not look like a valid user name`),
  'pve-volume-id': volumeId,
  // A volume, a new disk (`STORAGE:SIZE`, also a volume id by shape), an absolute path, or none/cdrom.
  'pve-volume-id-or-qm-path': (v) => (v === 'none' || v === 'cdrom' || v.startsWith('/') ? undefined : volumeId(v)),
  'pve-volume-id-or-absolute-path': (v) => (v.startsWith('/') ? undefined : volumeId(v)),
  'pve-storage-content': regex(/^(images|rootdir|vztmpl|iso|backup|snippets|import)$/, (v) => `invalid content type '${v}'`),
  'pve-tag-list': (v) => {
    const tags = v.split(/[;, ]/).filter((tag) => tag !== '');
    const bad = tags.find((tag) => !/^[a-z0-9_][a-z0-9_\-+.]*$/i.test(tag));
    return bad === undefined ? undefined : `invalid tag '${bad}'`;
  },
  'mac-addr': regex(/^[a-f0-9][02468ace](?::[a-f0-9]{2}){5}$/i, () => 'value does not look like a valid unicast MAC address'),
  'dns-name': regex(new RegExp(`^(${DNS_LABEL}\\.)*${DNS_LABEL}$`), (v) => `value '${v}' does not look like a valid DNS name`),
  urlencoded: regex(/^[-%a-zA-Z0-9_.!~*'()]*$/, (v) => `invalid urlencoded string: ${v}`),
  ipv4,
  ipv6,
  ip: (v) => (isIP(v) !== 0 ? undefined : 'value does not look like a valid IP address'),
  CIDR: cidr(0),
  CIDRv4: cidr(4),
  CIDRv6: cidr(6),
  address: (v) => (isIP(v) !== 0 || NAMED['dns-name']?.(v) === undefined ? undefined : `value '${v}' does not look like a valid address`),
};

/** Formats met but not verified: PVE registers more than the simulator knows. */
export const uncheckedFormats = new Set<string>();

/** True when the simulator checks this simple format (or its `-list`). */
export function hasNamedFormat(name: string): boolean {
  return name in NAMED || name.replace(/-list$/, '') in NAMED;
}

/**
 * Checks a named format; `<name>-list` checks every item of a list
 * (PVE::Tools::split_list: separated by `,`, `;`, spaces or NUL).
 */
export function checkNamedFormat(name: string, value: string): string | undefined {
  const direct = NAMED[name];
  if (direct) return direct(value);
  const list = /^(.*)-list$/.exec(name);
  const item = list?.[1] ? NAMED[list[1]] : undefined;
  if (item) {
    for (const part of value.split(/[,;\s\0]+/).filter((p) => p !== '')) {
      const error = item(part);
      if (error) return error;
    }
    return undefined;
  }
  if (!(name in PROPERTY_STRING_FORMATS)) uncheckedFormats.add(name);
  return undefined;
}
