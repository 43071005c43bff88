// The parts of the core kinds' schemas that differ between backends, generated
// from the backend list: the Provider's rules (which backends need a Secret,
// may skip TLS verification, take which endpoint schemes, have a settings
// block), the VMImage source rules (a ref's form, cloneMode) and the field
// descriptions that list backends. Pure functions of the list, so a test can
// hand them a list with one more backend.
import { camelCase, type BackendApi, type CamelCase, type EndpointScheme, type ImageSourceKind } from '../../backend-api.js';
import { Type, type CelRule, type TObject, type TOptional } from '../../schema.js';

/** `a`, `a or b`, `a, b or c`. */
export function orList(items: readonly string[]): string {
  return joinLast(items, 'or');
}

/** `a`, `a and b`, `a, b and c`. */
export function andList(items: readonly string[]): string {
  return joinLast(items, 'and');
}

function joinLast(items: readonly string[], word: string): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${word} ${items.at(-1) ?? ''}`;
}

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** CEL: `field` is one of `names` (backend names: no quote or backslash to escape). */
function isOneOf(field: string, names: readonly string[]): string {
  if (names.length === 0) return 'false';
  return names.length === 1 ? `${field} == '${names[0] ?? ''}'` : `${field} in [${quoted(names)}]`;
}

/** CEL: `field` is none of `names`. */
function isNoneOf(field: string, names: readonly string[]): string {
  if (names.length === 0) return 'true';
  return names.length === 1 ? `${field} != '${names[0] ?? ''}'` : `!(${field} in [${quoted(names)}])`;
}

const names = (apis: readonly BackendApi[]): string[] => apis.map((b) => b.name);

const PROVIDER_CLASS = 'self.providerClassRef.name';
const ENDPOINT = 'self.connection.endpoint';

/** RE2 for `scheme` as a literal, written as the body of a CEL single-quoted string (backslashes doubled). */
function celRegexLiteral(scheme: string): string {
  return scheme.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\/g, '\\\\');
}

/** The rule an endpoint of one of `group` (backends taking the same schemes) must pass, and the words of its refusal. */
function endpointRule(group: readonly BackendApi[], schemes: readonly EndpointScheme[]): CelRule {
  const test =
    schemes.length === 1
      ? `${ENDPOINT}.startsWith('${schemes[0]?.scheme ?? ''}://')`
      : `${ENDPOINT}.matches('^(${schemes.map((s) => celRegexLiteral(s.scheme)).join('|')})://')`;
  const prefixes = (list: readonly EndpointScheme[]): string => orList(list.map((s) => `${s.scheme}://`));
  const asides = [...new Set(schemes.flatMap((s) => (s.onlyFor === undefined ? [] : [s.onlyFor])))].map(
    (purpose) => ` (${prefixes(schemes.filter((s) => s.onlyFor === purpose))} for ${purpose})`,
  );
  return {
    rule: `${isNoneOf(PROVIDER_CLASS, names(group))} || ${test}`,
    message: `connection.endpoint must start with ${prefixes(schemes.filter((s) => s.onlyFor === undefined))} for ${andList(names(group))}${asides.join('')}`,
    fieldPath: '.connection.endpoint',
  };
}

const schemeKey = (api: BackendApi): string => api.endpoint.schemes.map((s) => s.scheme).join(' ');

/**
 * The Provider's rules that depend on its backend. Unknown names (a backend a
 * test adds to the enum) need a Secret and may not skip TLS verification.
 */
export function providerBackendRules(apis: readonly BackendApi[]): CelRule[] {
  const noSecret = apis.filter((b) => b.credentials.secret === 'forbidden');
  const insecure = apis.filter((b) => b.endpoint.insecureSkipTLSVerify);
  const credentialsRef = 'self.connection.credentialsRef';
  const rules: CelRule[] = [
    noSecret.length === 0
      ? { rule: `has(${credentialsRef})`, message: 'connection.credentialsRef is required', fieldPath: '.connection.credentialsRef' }
      : {
          rule: `${isNoneOf(PROVIDER_CLASS, names(noSecret))} ? has(${credentialsRef}) : !has(${credentialsRef})`,
          message: `connection.credentialsRef is ${[...(noSecret.length < apis.length ? [`required for ${andList(names(apis.filter((b) => !noSecret.includes(b))))}`] : []), `forbidden for ${andList(names(noSecret))}`].join(' and ')}`,
          fieldPath: '.connection.credentialsRef',
        },
    {
      rule: `!has(self.connection.insecureSkipTLSVerify) || !self.connection.insecureSkipTLSVerify || ${isOneOf(PROVIDER_CLASS, names(insecure))}`,
      message: `connection.insecureSkipTLSVerify is only allowed for ${andList(names(insecure))}`,
      fieldPath: '.connection.insecureSkipTLSVerify',
    },
  ];
  // In backend order: each group's endpoint rule where its first backend is, then that backend's settings rule.
  const grouped = new Set<string>();
  for (const api of apis) {
    if (!grouped.has(schemeKey(api))) {
      grouped.add(schemeKey(api));
      rules.push(
        endpointRule(
          apis.filter((b) => schemeKey(b) === schemeKey(api)),
          api.endpoint.schemes,
        ),
      );
    }
    if (api.providerSettings) {
      const field = camelCase(api.name);
      rules.push({
        rule: `!has(self.${field}) || ${PROVIDER_CLASS} == '${api.name}'`,
        message: `${api.name} settings are only for providerClassRef ${api.name}`,
        fieldPath: `.${field}`,
      });
    }
  }
  return rules;
}

/** The Provider field descriptions that list backends. */
export function providerBackendDescriptions(apis: readonly BackendApi[]): {
  readonly providerClass: string;
  readonly endpoint: string;
  readonly credentialsRef: string;
  readonly insecureSkipTLSVerify: string;
  readonly classTarget: string;
  readonly allowedTargetKind: string;
  readonly kind: string;
} {
  const withSecret = apis.filter((b) => b.credentials.secret === 'required');
  return {
    providerClass: `Backend of this Provider: ${orList(names(apis))}.`,
    endpoint: `Backend endpoint. ${apis.map((b) => `${b.name}: ${b.endpoint.example}`).join('; ')}.`,
    credentialsRef: `Secret with the credentials. ${withSecret.map((b) => `${b.name}: ${b.credentials.description ?? b.credentials.keys.join(', ')}`).join('; ')}. Read by name on every reconcile; never watched.`,
    insecureSkipTLSVerify: `Skip TLS verification of the endpoint. Only for ${andList(names(apis.filter((b) => b.endpoint.insecureSkipTLSVerify)))}; never the default.`,
    classTarget: `Backend target the class maps to. ${apis.flatMap((b) => (b.classTargetKeys.length > 0 ? [`${b.title}: ${orList(b.classTargetKeys)}`] : [])).join('; ')}.`,
    allowedTargetKind: `Kind of backend object. ${apis.flatMap((b) => (b.targetKinds.length > 0 ? [`${b.title}: ${orList(b.targetKinds)}`] : [])).join('; ')}.`,
    kind: `A Provider is one backend instance (${orList(apis.map((b) => b.instance))}) that VirtualMachines in its namespace can be scheduled onto.`,
  };
}

/** Settings blocks of the backends that have one, typed: `{ libvirt?: ... }`. */
export type ProviderSettingsFields<T extends readonly BackendApi[]> = {
  [B in T[number] as B extends BackendApi<string, TObject> ? CamelCase<B['name']> : never]: B extends BackendApi<string, infer S extends TObject>
    ? TOptional<S>
    : never;
};

/** Each backend's settings block, as an optional Provider spec field named after it (camelCase). */
export function providerSettingsFields<const T extends readonly BackendApi[]>(apis: T, taken: readonly string[]): ProviderSettingsFields<T> {
  const fields: Record<string, TOptional<TObject>> = {};
  for (const api of apis) {
    if (!api.providerSettings) continue;
    const field = camelCase(api.name);
    if (taken.includes(field)) throw new Error(`backend ${api.name}: its settings field "${field}" is a Provider spec field already`);
    fields[field] = Type.Optional(api.providerSettings);
  }
  return fields as ProviderSettingsFields<T>;
}

/** VMImage source rules that depend on the backend: a ref's form, and which sources take cloneMode. */
export function imageSourceBackendRules(apis: readonly BackendApi[]): CelRule[] {
  const uses = apis.flatMap((api) => Object.entries(api.imageSources).flatMap(([kind, use]) => (use ? [{ api, kind, use }] : [])));
  const cloned = uses.filter((u) => u.use.cloneModes);
  return [
    ...uses.flatMap(({ api, kind, use }) =>
      use.refPattern
        ? [
            {
              rule: `self.providerClass != '${api.name}' || self.kind != '${kind}' || self.ref.matches('${use.refPattern.regex.replace(/\\/g, '\\\\')}')`,
              message: `a ${api.name} ${kind} ref must be ${use.refPattern.means}`,
              fieldPath: '.ref',
            },
          ]
        : [],
    ),
    {
      rule: `!has(self.cloneMode)${cloned.length === 0 ? '' : ` || ${cloned.map((u) => `(self.providerClass == '${u.api.name}' && self.kind == '${u.kind}')`).join(' || ')}`}`,
      message: `cloneMode is for ${cloned.length === 0 ? 'no' : orList(cloned.map((u) => `${u.api.name} ${u.kind}`))} sources`,
      fieldPath: '.cloneMode',
    },
  ];
}

/** The VMImage source descriptions that list backends. */
export function imageSourceBackendDescriptions(
  apis: readonly BackendApi[],
  kinds: readonly ImageSourceKind[],
): { readonly kind: string; readonly cloneMode: string } {
  const readers = (kind: ImageSourceKind): string[] => apis.flatMap((b) => (b.imageSources[kind] ? [`${b.title} ${b.imageSources[kind].ref}`] : []));
  const cloned = apis.filter((b) => Object.values(b.imageSources).some((u) => u?.cloneModes));
  return {
    kind: `${kinds.map((k) => `${k}: ${readers(k).length === 0 ? 'no backend reads it yet' : orList(readers(k))}`).join('; ')}.`,
    cloneMode: `How machines are cloned from a ${orList(cloned.map((b) => b.title))} template: Full copies its disks to the class's storage; Linked shares its base volumes (copy-on-write, on the template's storage). Default Full.`,
  };
}

/** The VirtualMachine `spec.folder` description: the backends that place VMs in a folder, and how. */
export function virtualMachineFolderDescription(apis: readonly BackendApi[]): string {
  const placing = apis.filter((b) => b.virtualMachineFolder !== undefined);
  if (placing.length === 0) return 'Folder of the VM; no backend uses it.';
  return `${placing.map((b) => `${b.title} ${b.virtualMachineFolder ?? ''}`).join('; ')}.`;
}
