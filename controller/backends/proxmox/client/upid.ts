// UPIDs, PVE's task ids: `UPID:<node>:<pid>:<pstart>:[<count>:]<starttime>:<type>:<id>:<user>:`
// with pid, pstart and starttime in hex (PVE::Tools upid_decode; the optional
// task count appeared in PVE 8). The node in it is where the task runs, so
// its status is read there without being told the node separately.

export interface Upid {
  /** The whole id, as PVE returned it. */
  readonly upid: string;
  readonly node: string;
  readonly pid: number;
  readonly pstart: number;
  /** Seconds since the epoch. */
  readonly starttime: number;
  /** Task type, e.g. `qmclone`, `qmstart`, `qmdestroy`, `imgcopy`. */
  readonly type: string;
  /** The object of the task, e.g. the VMID; may be empty. */
  readonly id: string;
  /** `user@realm` or `user@realm!token`. */
  readonly user: string;
}

const UPID =
  /^UPID:([a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):(?:[0-9A-Fa-f]{8,9}:)?([0-9A-Fa-f]{8}):([^:\s]+):([^:\s]*):([^:\s]+):$/;

/** Parses a UPID; undefined when it is not one. */
export function parseUpid(upid: string): Upid | undefined {
  const match = UPID.exec(upid);
  if (!match) return undefined;
  const [, node = '', pid = '', pstart = '', starttime = '', type = '', id = '', user = ''] = match;
  return { upid, node, pid: parseInt(pid, 16), pstart: parseInt(pstart, 16), starttime: parseInt(starttime, 16), type, id, user };
}

/** Parses a UPID a call returned; anything else is a protocol error. */
export function requireUpid(upid: string, call: string): Upid {
  const parsed = parseUpid(upid);
  if (!parsed) throw new Error(`${call}: "${upid}" is not a UPID`);
  return parsed;
}

/** Builds a UPID (for simulators and tests): the inverse of parseUpid. */
export function formatUpid(fields: Omit<Upid, 'upid'>): string {
  const hex = (n: number): string => n.toString(16).toUpperCase().padStart(8, '0');
  return `UPID:${fields.node}:${hex(fields.pid)}:${hex(fields.pstart)}:${hex(fields.starttime)}:${fields.type}:${fields.id}:${fields.user}:`;
}
