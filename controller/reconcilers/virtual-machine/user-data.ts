// User-data placeholders (docs/adr/0007-user-data-secret.md). Only the names
// below are replaced; any other ${...} is left as written, because user-data is
// often a shell script with its own ${HOME} or ${1}.
//
// Injection. The template is the user's, in any format (cloud-config,
// a shell script, Ignition JSON, MIME), and a placeholder may stand anywhere in
// it: as a whole YAML value, inside '...' or "...", in a block scalar, mid-word
// in a shell command. No single quoting is safe in all of those: a YAML
// double-quoted scalar ends a '...' string early, and a shell still runs the
// "$(reboot)" in it. So safety rests on the values, and quoting only on top:
//
// 1. Every value is checked against its placeholder's grammar before it is
//    substituted: DNS names (VM_NAME, NAMESPACE, HOSTNAME, FQDN, DOMAIN), IP
//    addresses (IP, GATEWAY; DNS is a comma-separated list of them), a decimal
//    (PREFIX), <scheme>://<uuid> (PROVIDER_ID). Together these use only
//    [A-Za-z0-9.:,/-]: nothing that ends a line, starts a comment, closes or
//    escapes a quote, splits or expands a shell word, or, but for DNS's commas,
//    is a YAML flow indicator. So a valid value is inert wherever it lands. A
//    value outside its grammar (an object stored before the schema refused it,
//    see infra/api/names.ts; computeNicAddressing reports those) is rendered as
//    the empty string, never as written.
// 2. In a cloud-config (the template starts with #cloud-config, as cloud-init
//    tells), a placeholder that is a whole plain YAML scalar (`hostname: ${HOSTNAME}`,
//    `- ${FQDN}`, `[${DOMAIN}]`) is replaced by a double-quoted YAML scalar, so
//    the value stays a string in the YAML 1.1 cloud-init reads: a VM named
//    `on`, `null` or `0755` would otherwise be read as true, None or 493.
//    PREFIX (a number) and DNS (a list, meant to be spread as `[${DNS}]`) stay
//    bare. Everywhere else values are substituted as they are, which 1 makes safe.
//
// Binary user-data (gzip, or any bytes that are not UTF-8) is not a template:
// it is handed on byte for byte, unrendered (user-data-bytes.ts).
import { parseAllDocuments, stringify, visit } from 'yaml';
import { userDataText, type UserData } from '../../backends/user-data-bytes.js';
import { isDnsName, isIpAddress } from '../../../infra/api/names.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { providerIdFor } from '../machine-identity.js';
import { effectiveStaticAddress } from './nic-addressing.js';

export const USER_DATA_PLACEHOLDERS = ['VM_NAME', 'NAMESPACE', 'FQDN', 'HOSTNAME', 'IP', 'PREFIX', 'GATEWAY', 'DNS', 'DOMAIN', 'PROVIDER_ID'] as const;
export type UserDataPlaceholder = (typeof USER_DATA_PLACEHOLDERS)[number];

/** A value per placeholder; an unknown value (e.g. IP under DHCP) is the empty string. */
export type UserDataVars = Readonly<Record<UserDataPlaceholder, string>>;

const PLACEHOLDER = /\$\{([A-Z_]+)\}/g;
const isPlaceholder = (name: string): name is UserDataPlaceholder => (USER_DATA_PLACEHOLDERS as readonly string[]).includes(name);

const PROVIDER_ID = /^[a-z][a-z0-9-]*:\/\/[0-9a-f-]+$/;
const DECIMAL = /^[0-9]{1,3}$/;

/** What a value must look like to be substituted (rule 1); the empty string always may. */
const GRAMMARS: Readonly<Record<UserDataPlaceholder, (value: string) => boolean>> = {
  VM_NAME: isDnsName,
  NAMESPACE: isDnsName,
  FQDN: isDnsName,
  HOSTNAME: isDnsName,
  DOMAIN: isDnsName,
  IP: isIpAddress,
  GATEWAY: isIpAddress,
  DNS: (value) => value.split(',').every(isIpAddress),
  PREFIX: (value) => DECIMAL.test(value),
  PROVIDER_ID: (value) => PROVIDER_ID.test(value),
};

/** Not strings to YAML: bare even as a whole scalar (rule 2). */
const UNQUOTED: ReadonlySet<UserDataPlaceholder> = new Set<UserDataPlaceholder>(['PREFIX', 'DNS']);

/** The user-data to hand over for `source`: its text rendered, or binary user-data as it is. */
export function renderUserDataSource(source: UserData, vars: UserDataVars): UserData {
  const text = userDataText(source);
  return text === undefined ? source : renderUserData(text, vars);
}

export function renderUserData(template: string, vars: UserDataVars): string {
  const wholeScalars = template.startsWith('#cloud-config') ? plainScalarEnds(template) : new Map<number, number>();
  return template.replace(PLACEHOLDER, (whole: string, name: string, offset: number) => {
    if (!isPlaceholder(name)) return whole;
    const value = vars[name] === '' || GRAMMARS[name](vars[name]) ? vars[name] : '';
    const isWholeScalar = wholeScalars.get(offset) === offset + whole.length;
    return isWholeScalar && !UNQUOTED.has(name) ? doubleQuoted(value) : value;
  });
}

/**
 * Start → end offsets of the template's plain YAML scalars. Placeholders are first
 * masked by plain text of the same length (in a flow collection `${` would not
 * parse), so offsets in the masked text are offsets in the template. A template
 * that does not parse as YAML gets no quoting: rule 1 keeps it safe.
 */
function plainScalarEnds(template: string): Map<number, number> {
  const docs = parseAllDocuments(template.replace(PLACEHOLDER, (whole: string) => 'x'.repeat(whole.length)));
  const ends = new Map<number, number>();
  if (docs.some((doc) => doc.errors.length > 0)) return ends;
  for (const doc of docs) {
    visit(doc, {
      Scalar(_key, node) {
        if (node.type === 'PLAIN' && node.range) ends.set(node.range[0], node.range[1]);
      },
    });
  }
  return ends;
}

function doubleQuoted(value: string): string {
  // lineWidth 0: never folded onto a second line.
  return stringify(value, { defaultStringType: 'QUOTE_DOUBLE', lineWidth: 0 }).trimEnd();
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
    ? effectiveStaticAddress(
        first,
        vmClass.spec.network.interfaces.find((i) => i.name === first.name),
      )
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
