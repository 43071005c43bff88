// API tokens and their privileges, checked as the schema's `permissions.check`
// says (PVE::RPCEnvironment check_api2_permissions): `['perm', path, privs,
// 'any', 1 | 'require_param', name]`, `['and', …]`, `['or', …]`. A token holds
// privileges on ACL paths, propagated to the paths below (PVE's propagate=1);
// checks the schema leaves to the handler's code are not simulated.
import type { PermissionCheck, PveMethodInfo } from '../../support/proxmox/apidata.js';
import { PveHttpError } from './sim-errors.js';

export interface SimToken {
  /** `user@realm!name`. */
  readonly tokenID: string;
  readonly secret: string;
  /** ACL path → privileges there and below, e.g. `{ '/': ['VM.Audit'], '/vms/100': ['VM.PowerMgmt'] }`. */
  readonly privileges: Readonly<Record<string, readonly string[]>>;
}

/** Every privilege the provider role needs, on `/`: what a token made for banlieue holds. */
export const ALL_PRIVILEGES: readonly string[] = [
  'Sys.Audit',
  'Sys.Modify',
  'VM.Allocate',
  'VM.Audit',
  'VM.Clone',
  'VM.PowerMgmt',
  'VM.Config.CPU',
  'VM.Config.Memory',
  'VM.Config.Disk',
  'VM.Config.Network',
  'VM.Config.Options',
  'VM.Config.Cloudinit',
  'VM.Config.CDROM',
  'VM.Config.HWType',
  'VM.GuestAgent.Audit',
  'VM.GuestAgent.Unrestricted',
  'VM.Snapshot',
  'VM.Migrate',
  'VM.Console',
  'VM.Backup',
  'Datastore.Allocate',
  'Datastore.AllocateSpace',
  'Datastore.AllocateTemplate',
  'Datastore.Audit',
  'SDN.Use',
  'SDN.Audit',
  'Pool.Audit',
  'Pool.Allocate',
];

/** Throws the 403 PVE sends when the token lacks what `info` requires. */
export function checkPermissions(info: PveMethodInfo, token: SimToken, params: Readonly<Record<string, unknown>>): void {
  const check = info.permissions?.check;
  if (!check) return;
  const missing = evaluate(check, token, params);
  if (missing !== undefined) throw new PveHttpError(403, `Permission check failed (${missing})`);
}

/** undefined when allowed; else `path, privilege` of a check that failed (PVE's message). */
function evaluate(check: PermissionCheck, token: SimToken, params: Readonly<Record<string, unknown>>): string | undefined {
  const [op, ...args] = check;
  if (op === 'and') {
    for (const sub of args) {
      const missing = evaluate(sub as PermissionCheck, token, params);
      if (missing !== undefined) return missing;
    }
    return undefined;
  }
  if (op === 'or') {
    let first: string | undefined;
    for (const sub of args) {
      const missing = evaluate(sub as PermissionCheck, token, params);
      if (missing === undefined) return undefined;
      first ??= missing;
    }
    return first;
  }
  if (op === 'perm') return perm(args, token, params);
  // userid-param, userid-group, perm-modify: user and ACL administration, which banlieue never calls.
  return undefined;
}

function perm(args: readonly unknown[], token: SimToken, params: Readonly<Record<string, unknown>>): string | undefined {
  const [rawPath, privs, ...options] = args as [string, readonly string[], ...unknown[]];
  const option = (name: string): unknown => {
    const at = options.indexOf(name);
    return at >= 0 ? options[at + 1] : undefined;
  };
  const required = option('require_param');
  if (typeof required === 'string' && params[required] === undefined) return `${rawPath}, ${privs.join('|')}`;
  const path = rawPath.replace(/\{([^}]+)\}/g, (_, name: string) => String(params[name] ?? ''));
  const held = privs.filter((priv) => holds(token, path, priv));
  if (option('any') === 1 ? held.length > 0 : held.length === privs.length) return undefined;
  const lacking = privs.find((priv) => !held.includes(priv)) ?? '';
  return `${path}, ${option('any') === 1 ? privs.join('|') : lacking}`;
}

function holds(token: SimToken, path: string, privilege: string): boolean {
  return Object.entries(token.privileges).some(([aclPath, privs]) => isBelow(path, aclPath) && privs.includes(privilege));
}

function isBelow(path: string, aclPath: string): boolean {
  if (aclPath === '/') return true;
  return path === aclPath || path.startsWith(`${aclPath}/`);
}
