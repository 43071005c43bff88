// The Proxmox VE API schema (pve-docs `api-viewer/apidata.js` as JSON, PVE
// 9.1), read at test time. It is AGPL-3.0-or-later test data kept apart in
// test/fixtures/proxmox/ (see its README); the env var PROXMOX_APIDATA points
// the tests at another copy, relative to the repository root or absolute.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROXMOX_APIDATA_ENV = 'PROXMOX_APIDATA';
const DEFAULT_LOCATION = 'test/fixtures/proxmox/proxmox-ve.apidata.json';
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One property schema as PVE writes it (PVE::JSONSchema), booleans as 0/1. */
export interface PveSchema {
  readonly type?: string;
  readonly optional?: number | boolean;
  readonly format?: string | Readonly<Record<string, PveSchema>>;
  readonly enum?: readonly (string | number)[];
  readonly pattern?: string;
  readonly minimum?: number | string;
  readonly maximum?: number | string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly properties?: Readonly<Record<string, PveSchema>>;
  readonly additionalProperties?: number | boolean | PveSchema;
  readonly items?: PveSchema;
  readonly requires?: string;
  readonly description?: string;
  readonly typetext?: string;
  readonly default_key?: number | boolean;
  /** In a property-string format: this key is another's alias. */
  readonly alias?: string;
  /** In a property-string format: this key is a value of `keyAlias` (`virtio=<mac>` sets model=virtio, macaddr=<mac>). */
  readonly keyAlias?: string;
  readonly oneOf?: readonly PveSchema[];
  readonly default?: unknown;
}

export interface PveMethodInfo {
  readonly name: string;
  readonly method: HttpMethod;
  readonly description?: string;
  readonly allowtoken?: number;
  readonly protected?: number;
  readonly parameters: PveSchema & { readonly properties?: Readonly<Record<string, PveSchema>> };
  readonly returns: PveSchema;
  readonly permissions?: { readonly check?: PermissionCheck; readonly user?: string; readonly description?: string };
}

/** `['perm', path, privs, ...]`, `['and'|'or', ...checks]`, `['userid-param', ...]`… */
export type PermissionCheck = readonly unknown[];

interface PveNode {
  readonly path: string;
  readonly info?: Partial<Record<HttpMethod, PveMethodInfo>>;
  readonly children?: readonly PveNode[];
}

export interface ApiPath {
  /** `/nodes/{node}/qemu/{vmid}/config`. */
  readonly template: string;
  readonly methods: Partial<Record<HttpMethod, PveMethodInfo>>;
}

/** The schema, indexed by path template. */
export class PveApiSchema {
  readonly paths: ReadonlyMap<string, ApiPath>;
  private readonly matchers: readonly { readonly regex: RegExp; readonly path: ApiPath; readonly names: readonly string[] }[];

  constructor(roots: readonly PveNode[]) {
    const paths = new Map<string, ApiPath>();
    const visit = (node: PveNode): void => {
      paths.set(node.path, { template: node.path, methods: node.info ?? {} });
      for (const child of node.children ?? []) visit(child);
    };
    roots.forEach(visit);
    this.paths = paths;
    // Literal segments before placeholders: `/nodes/{node}/qemu` wins over a `{…}` sibling.
    this.matchers = [...paths.values()]
      .map((path) => {
        const names: string[] = [];
        const source = path.template
          .split('/')
          .map((segment) => {
            const placeholder = /^\{([^}]+)\}$/.exec(segment);
            if (!placeholder?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
            names.push(placeholder[1]);
            return '([^/]+)';
          })
          .join('/');
        return { regex: new RegExp(`^${source}$`), path, names };
      })
      .sort((a, b) => a.names.length - b.names.length);
  }

  /** The template a concrete path belongs to and its placeholder values (decoded). */
  match(concrete: string): { path: ApiPath; pathParams: Record<string, string> } | undefined {
    for (const { regex, path, names } of this.matchers) {
      const found = regex.exec(concrete);
      if (!found) continue;
      const pathParams: Record<string, string> = {};
      names.forEach((name, i) => (pathParams[name] = decodeURIComponent(found[i + 1] ?? '')));
      return { path, pathParams };
    }
    return undefined;
  }

  method(template: string, method: HttpMethod): PveMethodInfo | undefined {
    return this.paths.get(template)?.methods[method];
  }
}

/** Where the schema file is, from PROXMOX_APIDATA or the default. */
export function apidataLocation(): string {
  return resolve(REPO_ROOT, process.env[PROXMOX_APIDATA_ENV] ?? DEFAULT_LOCATION);
}

const cache = new Map<string, PveApiSchema>();

/** Loads the schema once per process; fails loudly, saying where it looked, when the file is missing. */
export function loadPveApiSchema(location = apidataLocation()): PveApiSchema {
  const cached = cache.get(location);
  if (cached) return cached;
  if (!existsSync(location)) {
    throw new Error(
      `Proxmox VE API schema not found at ${location}: set ${PROXMOX_APIDATA_ENV} to the path of proxmox-ve.apidata.json ` +
        `(pve-docs api-viewer/apidata.js as JSON; see test/fixtures/proxmox/README.md)`,
    );
  }
  const schema = new PveApiSchema(JSON.parse(readFileSync(location, 'utf8')) as PveNode[]);
  cache.set(location, schema);
  return schema;
}
