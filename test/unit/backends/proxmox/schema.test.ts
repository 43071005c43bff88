// Every call the Proxmox client makes, checked against the PVE API schema
// (proxmox-ve.apidata.json, read at test time: the client's types are
// hand-written because the schema is AGPL; see client/wire-types.ts): the
// path and method exist, every parameter exists with PVE's type and
// requiredness, every field the client reads is one PVE answers, with its type,
// and is optional in the client wherever PVE may leave it out.
import { Type, type TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { Endpoints } from '../../../../controller/backends/proxmox/client/endpoints.js';
import { loadPveApiSchema, type PveSchema } from '../../../support/proxmox/apidata.js';

const api = loadPveApiSchema();

/** The PVE property for a client key: itself, or `net[n]` for `net3` (with n in PVE's range). */
function pveProperty(properties: Readonly<Record<string, PveSchema>>, key: string): PveSchema | undefined {
  const own = properties[key];
  if (own) return own;
  const indexed = /^([a-z]+)(\d+)$/.exec(key);
  if (!indexed) return undefined;
  const family = properties[`${indexed[1]}[n]`];
  const range = /\(n is 0 to (\d+)\)/.exec(family?.description ?? '');
  if (family && range?.[1] !== undefined && Number(indexed[2]) > Number(range[1])) return undefined;
  return family;
}

const isOptional = (schema: PveSchema): boolean => schema.optional === 1 || schema.optional === true;

/** Differences between the client's TypeBox schema and PVE's, as `where: what` lines. */
function compare(ours: TSchema, pve: PveSchema, where: string): string[] {
  const anyOf = ours.anyOf as TSchema[] | undefined;
  if (anyOf) {
    const literals = anyOf.filter((member) => member.const !== undefined).map((member) => member.const as unknown);
    if (literals.length === anyOf.length) {
      const missing = literals.filter((value) => !(pve.enum ?? []).some((allowed) => String(allowed) === String(value)));
      return pve.type === 'string' && missing.length === 0 ? [] : [`${where}: enum ${JSON.stringify(literals)} vs PVE ${pve.type} ${JSON.stringify(pve.enum)}`];
    }
    // string | null: PVE's "optional string" answer.
    const kinds = anyOf.map((member) => member.type as string).sort();
    if (kinds.join() === 'null,string')
      return pve.type === 'string' && isOptional(pve) ? [] : [`${where}: string|null vs PVE ${pve.type}${isOptional(pve) ? '?' : ''}`];
    return [`${where}: union not understood by this test`];
  }
  if (ours.type !== pve.type) return [`${where}: ${String(ours.type)} vs PVE ${String(pve.type)}`];
  if (ours.type === 'array') return ours.items && pve.items ? compare(ours.items as TSchema, pve.items, `${where}[]`) : [`${where}: array items`];
  if (ours.type !== 'object') return [];
  // PVE answers a free-form object here (e.g. the agent passthrough): nothing to compare with.
  if (!pve.properties) return [];
  const required = new Set((ours.required as string[] | undefined) ?? []);
  return Object.entries(ours.properties as Record<string, TSchema>).flatMap(([key, schema]) => {
    const theirs = pveProperty(pve.properties ?? {}, key);
    if (!theirs) return [`${where}.${key}: not in PVE's answer`];
    const optionality = required.has(key) && isOptional(theirs) ? [`${where}.${key}: required here, optional in PVE`] : [];
    return [...optionality, ...compare(schema, theirs, `${where}.${key}`)];
  });
}

function compareParams(ours: TSchema, pve: PveSchema, path: string): string[] {
  const properties = pve.properties ?? {};
  const required = new Set((ours.required as string[] | undefined) ?? []);
  // A `{name}` of the path is always sent, though PVE calls some optional (storage of a content DELETE).
  const inPath = (key: string): boolean => path.includes(`{${key}}`);
  const oursKeys = Object.keys(ours.properties as Record<string, TSchema>);
  const problems = oursKeys.flatMap((key) => {
    const theirs = pveProperty(properties, key);
    if (!theirs) return [`${key}: not a parameter of this call`];
    const pveRequired = !isOptional(theirs) || inPath(key);
    const optionality = required.has(key) !== pveRequired ? [`${key}: ${required.has(key) ? 'required' : 'optional'} here, not in PVE`] : [];
    return [...optionality, ...compare((ours.properties as Record<string, TSchema>)[key] as TSchema, theirs, key)];
  });
  const missing = Object.entries(properties)
    .filter(([key, schema]) => !isOptional(schema) && !oursKeys.includes(key))
    .map(([key]) => `${key}: required by PVE, missing here`);
  return [...problems, ...missing];
}

describe('Proxmox client calls against the PVE API schema', () => {
  const calls = Object.entries(Endpoints).map(([name, endpoint]) => ({ name, endpoint }));

  it.each(calls)('$name: the path and method exist', ({ endpoint }) => {
    expect(api.method(endpoint.path, endpoint.method), `${endpoint.method} ${endpoint.path}`).toBeDefined();
  });

  it.each(calls)('$name: every parameter exists with PVE type and requiredness', ({ endpoint }) => {
    const info = api.method(endpoint.path, endpoint.method);
    expect(compareParams(endpoint.params, info?.parameters ?? {}, endpoint.path)).toEqual([]);
  });

  it.each(calls)('$name: every field read is in the answer, typed as PVE types it', ({ endpoint }) => {
    const info = api.method(endpoint.path, endpoint.method);
    expect(compare(endpoint.returns, info?.returns ?? {}, 'returns')).toEqual([]);
  });

  it('reports a wrong name, type, requiredness or field (this test checks something)', () => {
    const clone = Endpoints.qemuClone;
    const info = api.method(clone.path, clone.method);
    const wrongParams = Type.Object({ node: Type.String(), vmid: Type.String(), newId: Type.Integer(), full: Type.Boolean() });
    expect(compareParams(wrongParams, info?.parameters ?? {}, clone.path)).toEqual([
      'vmid: string vs PVE integer',
      'newId: not a parameter of this call',
      'full: required here, not in PVE',
      'newid: required by PVE, missing here',
    ]);
    const status = api.method(Endpoints.taskStatus.path, 'GET');
    const wrongReturns = Type.Object({ status: Type.String(), exitstatus: Type.String(), result: Type.Optional(Type.String()) });
    expect(compare(wrongReturns, status?.returns ?? {}, 'returns')).toEqual([
      'returns.exitstatus: required here, optional in PVE',
      "returns.result: not in PVE's answer",
    ]);
  });

  it('fails loudly, naming PROXMOX_APIDATA, when the schema file is not there', () => {
    expect(() => loadPveApiSchema('/nonexistent/proxmox-ve.apidata.json')).toThrow(
      /not found at \/nonexistent\/proxmox-ve\.apidata\.json: set PROXMOX_APIDATA/,
    );
  });

  it.each(calls)('$name: the call accepts API tokens', ({ endpoint }) => {
    expect(api.method(endpoint.path, endpoint.method)?.allowtoken).toBe(1);
  });
});
