// What makes a PVE VM this machine's (DESIGN §3, docs/adr/0016-ownership-marks.md),
// all in the VM's own config (pure):
//   - `smbios1: uuid=<machine UUID>`: the identity the guest (and the kubelet's
//     providerID) sees; set right after the clone, as the clone call takes no smbios1;
//   - two description lines, written by the clone call itself (so a VM made by a
//     clone whose provider died before configuring it is still known):
//     `banlieue-uuid: <UUID>` and `banlieue-owner: <kind>/<namespace>/<name>`,
//     the ownership mark `assertOwnedBy` checks;
//   - a tag `banlieue.<kind>.<namespace>.<name>`: the mark as PVE's tag grammar
//     allows it, listed by /cluster/resources, so candidates are found without
//     reading every VM's config (and visible in the PVE UI).
// A VM is this machine's when its smbios1 UUID is the machine's UUID, or, for a
// clone of ours not yet configured (no smbios1 of ours, no tag), when its
// description's UUID line is (`matchVm`); it may be changed or destroyed only
// when its description also carries the machine's mark.
// Released (deletionPolicy Retain), the VM loses its tag and owner line; the
// line `banlieue-released-from: <mark>` says which machine it was.
import { ownerMark, type MachineOwner, type VmMarks } from '../../ownership.js';

const UUID_LINE = 'banlieue-uuid:';
const OWNER_LINE = 'banlieue-owner:';
const RELEASED_LINE = 'banlieue-released-from:';
const HEADER = 'Managed by banlieue: the two lines below identify this VM and its machine; do not edit them.';
const RELEASED_HEADER = 'Released by banlieue, which no longer manages this VM; the two lines below say which machine it was.';

/** The description a clone is given: a header and the UUID and owner lines. */
export function cloneDescription(owner: MachineOwner, uuid: string): string {
  return [HEADER, `${UUID_LINE} ${uuid}`, `${OWNER_LINE} ${ownerMark(owner)}`].join('\n');
}

/** The value of the first description line starting with `prefix`, trimmed. */
function lineValue(description: string | undefined, prefix: string): string | undefined {
  for (const line of (description ?? '').split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed.startsWith(prefix)) return trimmed.slice(prefix.length).trim();
  }
  return undefined;
}

/** The ownership mark a VM's description carries, if any. */
export function markOf(description: string | undefined): string | undefined {
  return lineValue(description, OWNER_LINE);
}

/** The marks a VM's description carries: its owner line, or the line a release left. */
export function marksOf(description: string | undefined): VmMarks {
  return { owner: markOf(description), releasedFrom: lineValue(description, RELEASED_LINE) };
}

/** The description of a released VM: the owner line (and our header) replaced by the released-from line; the UUID line and what others wrote kept. */
export function releasedDescription(description: string | undefined, releasedFrom: string): string {
  const uuid = descriptionUuid(description);
  const lines = [RELEASED_HEADER, ...(uuid === undefined ? [] : [`${UUID_LINE} ${uuid}`]), `${RELEASED_LINE} ${releasedFrom}`];
  return withOthers(lines.join('\n'), description);
}

/** The UUID line of a VM's description, lower-cased. */
export function descriptionUuid(description: string | undefined): string | undefined {
  return lineValue(description, UUID_LINE)?.toLowerCase();
}

/** The description with our lines, added to what the template or a user wrote when missing. */
export function withMarks(description: string | undefined, owner: MachineOwner, uuid: string): string {
  if (markOf(description) === ownerMark(owner) && descriptionUuid(description) === uuid.toLowerCase()) return description ?? '';
  return withOthers(cloneDescription(owner, uuid), description);
}

/** `ours` then, after an empty line, what others wrote in `description` (every banlieue line dropped). */
function withOthers(ours: string, description: string | undefined): string {
  const banlieue = [UUID_LINE, OWNER_LINE, RELEASED_LINE];
  const kept = (description ?? '')
    .split(/\r?\n/)
    .filter((line) => !banlieue.some((prefix) => line.trim().startsWith(prefix)) && line.trim() !== HEADER && line.trim() !== RELEASED_HEADER)
    .join('\n')
    .trim();
  return [ours, ...(kept === '' ? [] : ['', kept])].join('\n');
}

/** `banlieue.<kind>.<namespace>.<name>`, lower-case: PVE tags allow [a-z0-9_+.-]; namespaces hold no dot, so it parses back. */
export function ownerTag(owner: MachineOwner): string {
  return `banlieue.${owner.kind}.${owner.namespace}.${owner.name}`.toLowerCase();
}

/** PVE's tag list (`a;b`, also `,` or space separated). */
export function parseTags(tags: string | undefined): string[] {
  return (tags ?? '').split(/[;, ]+/).filter((t) => t !== '');
}

/** The tag list with `tag` added, or undefined when it is there already. */
export function addTag(tags: string | undefined, tag: string): string | undefined {
  const list = parseTags(tags);
  return list.some((t) => t.toLowerCase() === tag) ? undefined : [...list, tag].join(';');
}

/** The tag list without `tag` (case-insensitive), or undefined when that leaves none. */
export function withoutTag(tags: string | undefined, tag: string): string | undefined {
  const list = parseTags(tags).filter((t) => t.toLowerCase() !== tag);
  return list.length === 0 ? undefined : list.join(';');
}

/** The `uuid=` of an smbios1 value, lower-cased. */
export function smbiosUuid(smbios1: string | undefined): string | undefined {
  return /(?:^|,)uuid=([0-9a-fA-F-]{36})(?:,|$)/.exec(smbios1 ?? '')?.[1]?.toLowerCase();
}

/** smbios1 with `uuid` set, the other fields (manufacturer, serial…) kept. */
export function withSmbiosUuid(smbios1: string | undefined, uuid: string): string {
  const others = (smbios1 ?? '').split(',').filter((part) => part !== '' && !part.startsWith('uuid='));
  return [`uuid=${uuid}`, ...others].join(',');
}

/** What a VM's config says of it, for one machine: what `matchVm` reads. */
export interface MatchableConfig {
  readonly smbios1?: string;
  readonly description?: string;
  readonly tags?: string;
}

/** How a VM is the machine's: by its identity (smbios1), or as a clone of ours not yet configured. */
export type VmMatch = 'Identity' | 'UnconfiguredClone';

/**
 * How a VM config names itself the machine's VM: `Identity` when its smbios1 UUID is the
 * machine's; `UnconfiguredClone` when only its description's UUID line is and it carries no
 * owner tag yet: a clone of ours the first config has not reached (the clone call writes the
 * description; PVE gives the clone a random smbios1; the first config sets smbios1 and the tag
 * in one write). A PVE copy of a configured VM has its description and tag with a new smbios1
 * UUID: no match, it is another VM. Undefined: not the machine's.
 */
export function matchVm(config: MatchableConfig, uuid: string, owner: MachineOwner): VmMatch | undefined {
  const wanted = uuid.toLowerCase();
  if (smbiosUuid(config.smbios1) === wanted) return 'Identity';
  if (descriptionUuid(config.description) !== wanted) return undefined;
  const tag = ownerTag(owner);
  return parseTags(config.tags).some((t) => t.toLowerCase() === tag) ? undefined : 'UnconfiguredClone';
}
