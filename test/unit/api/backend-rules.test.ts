// The Provider and VMImage rules and descriptions generated from the backend
// list: what today's list gives, and what one more backend changes.
import { describe, expect, it } from 'vitest';
import { defineBackendApi, type BackendApi } from '../../../infra/api/backend-api.js';
import { BACKEND_APIS } from '../../../infra/api/backends.js';
import {
  andList,
  imageSourceBackendRules,
  orList,
  providerBackendDescriptions,
  providerBackendRules,
  providerSettingsFields,
} from '../../../infra/api/banlieue.io/v1alpha1/backend-rules.js';
import { IMAGE_SOURCE_KINDS } from '../../../infra/api/backend-api.js';
import { Type } from '../../../infra/api/schema.js';

const [first] = BACKEND_APIS;

/** A backend on a host of its own over ssh+x://, with no Secret and a settings block. */
const extra = defineBackendApi({
  ...first,
  name: 'acme-hv',
  title: 'Acme HV',
  instance: 'an Acme host',
  endpoint: { schemes: [{ scheme: 'ssh+x', defaultPort: 2222 }], example: 'ssh+x://host', insecureSkipTLSVerify: false },
  credentials: { secret: 'forbidden', keys: [] },
  classTargetKeys: ['volume'],
  targetKinds: [],
  imageSources: { Url: { ref: 'image', refPattern: { regex: '^https://', means: 'an https:// URL' }, cloneModes: true } },
  providerSettings: Type.Object({ turbo: Type.Optional(Type.Boolean()) }),
});
const withExtra: readonly BackendApi[] = [...BACKEND_APIS, extra];

const ruleFor = (rules: readonly { rule: string; message: string }[], text: string): { rule: string; message: string } | undefined =>
  rules.find((r) => r.message.includes(text));

describe('the rules generated from the backend list', () => {
  it.each([
    [[], ''],
    [['a'], 'a'],
    [['a', 'b'], 'a or b'],
    [['a', 'b', 'c'], 'a, b or c'],
  ])('lists %j as "%s"', (items, text) => {
    expect(orList(items)).toBe(text);
    expect(andList(items)).toBe(text.replace(' or ', ' and '));
  });

  it('require a Secret of every backend but those that forbid one, and of a name no entry has', () => {
    const today = ruleFor(providerBackendRules(BACKEND_APIS), 'credentialsRef is required');
    const forbidding = BACKEND_APIS.filter((b) => b.credentials.secret === 'forbidden').map((b) => b.name);
    for (const name of forbidding) expect(today?.rule).toContain(`'${name}'`);
    const more = ruleFor(providerBackendRules(withExtra), 'credentialsRef is required');
    expect(more?.rule).toBe(
      `!(self.providerClassRef.name in [${[...forbidding, 'acme-hv'].map((n) => `'${n}'`).join(', ')}]) ? has(self.connection.credentialsRef) : !has(self.connection.credentialsRef)`,
    );
    expect(more?.message).toMatch(/and forbidden for .*acme-hv$/);
  });

  it('give a backend with schemes of its own an endpoint rule of its own, named after its schemes', () => {
    const rule = ruleFor(providerBackendRules(withExtra), 'must start with ssh+x://');
    expect(rule).toEqual({
      rule: "self.providerClassRef.name != 'acme-hv' || self.connection.endpoint.startsWith('ssh+x://')",
      message: 'connection.endpoint must start with ssh+x:// for acme-hv',
      fieldPath: '.connection.endpoint',
    });
  });

  it("put a backend with the schemes of another in that backend's endpoint rule", () => {
    const twin = defineBackendApi({ ...first, name: 'twin' });
    const rules = providerBackendRules([...BACKEND_APIS, twin]).filter((r) => r.message.startsWith('connection.endpoint'));
    expect(rules).toHaveLength(providerBackendRules(BACKEND_APIS).filter((r) => r.message.startsWith('connection.endpoint')).length);
    expect(rules.find((r) => r.rule.includes("'twin'"))?.rule).toContain(`'${first.name}'`);
  });

  it('match several schemes as literals, escaping what RE2 would read otherwise', () => {
    const multi = defineBackendApi({ ...extra, endpoint: { ...extra.endpoint, schemes: [{ scheme: 'a+b' }, { scheme: 'c.d', onlyFor: 'tests' }] } });
    expect(providerBackendRules([multi]).find((r) => r.fieldPath === '.connection.endpoint')).toMatchObject({
      rule: "self.providerClassRef.name != 'acme-hv' || self.connection.endpoint.matches('^(a\\\\+b|c\\\\.d)://')",
      message: 'connection.endpoint must start with a+b:// for acme-hv (c.d:// for tests)',
    });
    expect(providerBackendRules([multi])[0]?.message).toBe('connection.credentialsRef is forbidden for acme-hv');
  });

  it('allow a settings block only on its backend, under the camelCase name', () => {
    expect(ruleFor(providerBackendRules(withExtra), 'acme-hv settings')).toEqual({
      rule: "!has(self.acmeHv) || self.providerClassRef.name == 'acme-hv'",
      message: 'acme-hv settings are only for providerClassRef acme-hv',
      fieldPath: '.acmeHv',
    });
    expect(Object.keys(providerSettingsFields(withExtra, []))).toContain('acmeHv');
    expect(() => providerSettingsFields(withExtra, ['acmeHv'])).toThrow(/"acmeHv" is a Provider spec field already/);
  });

  it('check a source ref of the form its backend says, and allow cloneMode only where a backend takes it', () => {
    const rules = imageSourceBackendRules([extra]);
    expect(rules).toContainEqual({
      rule: "self.providerClass != 'acme-hv' || self.kind != 'Url' || self.ref.matches('^https://')",
      message: 'a acme-hv Url ref must be an https:// URL',
      fieldPath: '.ref',
    });
    expect(rules).toContainEqual({
      rule: "!has(self.cloneMode) || (self.providerClass == 'acme-hv' && self.kind == 'Url')",
      message: 'cloneMode is for acme-hv Url sources',
      fieldPath: '.cloneMode',
    });
  });

  it('describe every backend in the fields that list them', () => {
    const described = providerBackendDescriptions(withExtra);
    expect(described.providerClass).toMatch(/ or acme-hv\.$/);
    expect(described.endpoint).toContain('acme-hv: ssh+x://host');
    expect(described.credentialsRef).not.toContain('acme-hv');
    expect(described.classTarget).toContain('Acme HV: volume');
    expect(described.kind).toContain('or an Acme host)');
    expect(IMAGE_SOURCE_KINDS).toContain('Url');
  });
});
