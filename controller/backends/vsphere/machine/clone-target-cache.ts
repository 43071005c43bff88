// Clone targets, and the template's hardware, resolved once per vCenter
// session and placement for a short while. Fifty machines created at once in
// one failure domain would otherwise walk the same inventory fifty times
// (four or five container views and a dozen property reads each), and
// concurrent passes share the one lookup in flight. A clone that cannot start
// forgets the entry, so a renamed or removed object is looked up afresh.
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { VmHardware } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';
import { resolveCloneTargets, type CloneSource, type CloneTargets } from './clone-targets.js';

export interface ResolvedClone {
  readonly targets: CloneTargets;
  readonly templateHardware: VmHardware;
}

interface Entry {
  readonly expires: number;
  readonly value: Promise<ResolvedClone>;
}

type Lookup = (client: VsphereClient, spec: VSphereMachineSpec, raw: Readonly<Record<string, string>>, source: CloneSource) => Promise<ResolvedClone>;

export interface CloneTargetCacheOptions {
  /** How long a resolution is reused: short, the inventory changes under us. @default 30000 */
  readonly ttlMs?: number;
  readonly now?: () => number;
  /** @default resolveCloneTargets and the template's hardware */
  readonly lookup?: Lookup;
}

export class CloneTargetCache {
  /** Per session: a new login (rotated credentials) starts empty. */
  private readonly sessions = new WeakMap<VsphereClient, Map<string, Entry>>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly lookup: Lookup;

  constructor(options: CloneTargetCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.now = options.now ?? Date.now;
    this.lookup = options.lookup ?? resolveClone;
  }

  resolve(client: VsphereClient, spec: VSphereMachineSpec, raw: Readonly<Record<string, string>>, source: CloneSource): Promise<ResolvedClone> {
    const entries = this.entriesOf(client);
    const key = keyOf(spec, raw, source);
    const cached = entries.get(key);
    if (cached && cached.expires > this.now()) return cached.value;
    const value = this.lookup(client, spec, raw, source);
    entries.set(key, { expires: this.now() + this.ttlMs, value });
    // A failed lookup is not remembered: the next pass asks again.
    value.catch(() => {
      if (entries.get(key)?.value === value) entries.delete(key);
    });
    return value;
  }

  /** Forget what was resolved for this placement (its clone failed to start). */
  forget(client: VsphereClient, spec: VSphereMachineSpec, raw: Readonly<Record<string, string>>, source: CloneSource): void {
    this.sessions.get(client)?.delete(keyOf(spec, raw, source));
  }

  private entriesOf(client: VsphereClient): Map<string, Entry> {
    let entries = this.sessions.get(client);
    if (!entries) {
      entries = new Map();
      this.sessions.set(client, entries);
    }
    const now = this.now();
    for (const [key, entry] of entries) if (entry.expires <= now) entries.delete(key);
    return entries;
  }
}

async function resolveClone(
  client: VsphereClient,
  spec: VSphereMachineSpec,
  raw: Readonly<Record<string, string>>,
  source: CloneSource,
): Promise<ResolvedClone> {
  const targets = await resolveCloneTargets(client, spec, raw, source);
  return { targets, templateHardware: await client.vms.hardware(targets.template) };
}

/** Exactly what resolveCloneTargets reads of the spec, the failure domain and the Provider: an opt-in withdrawn is not outlived by its lookups. */
function keyOf(spec: VSphereMachineSpec, raw: Readonly<Record<string, string>>, source: CloneSource): string {
  return JSON.stringify([
    source.virtualMachines,
    spec.datacenter ?? raw.datacenter,
    spec.cluster ?? raw.cluster,
    spec.resourcePool,
    raw.resourcePool,
    spec.folder,
    spec.datastore,
    spec.template,
    spec.templateFolder,
    (spec.network ?? []).map((nic) => nic.portGroup),
  ]);
}
