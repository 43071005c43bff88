// What a simulated endpoint gets: the parameters as PVE's check converted
// them (integers as numbers, booleans as 1/0), the calling token's user, the
// state, the tasks. Handlers answer the `data` or throw PveHttpError.
import type { SimState } from './sim-state.js';
import type { SimTasks } from './sim-tasks.js';

export interface SimBehaviour {
  /** How long a running VM's guest agent takes to answer, unless the VM says otherwise. */
  agentDelayMs: number;
}

export interface HandlerContext {
  readonly params: Readonly<Record<string, unknown>>;
  /** `user@realm!token`: the UPID's user. */
  readonly user: string;
  readonly state: SimState;
  readonly tasks: SimTasks;
  readonly behaviour: SimBehaviour;
  /** An upload's file. */
  readonly file?: Buffer;
}

export type Handler = (ctx: HandlerContext) => unknown;

/** Routes by `METHOD /template`. */
export type Routes = Readonly<Record<string, Handler>>;

export function str(ctx: HandlerContext, name: string): string {
  const value = ctx.params[name];
  if (typeof value !== 'string') throw new Error(`simulator: parameter ${name} is not a string after validation`);
  return value;
}

export function optStr(ctx: HandlerContext, name: string): string | undefined {
  const value = ctx.params[name];
  return typeof value === 'string' ? value : undefined;
}

export function int(ctx: HandlerContext, name: string): number {
  const value = ctx.params[name];
  if (typeof value !== 'number') throw new Error(`simulator: parameter ${name} is not a number after validation`);
  return value;
}

export function optInt(ctx: HandlerContext, name: string): number | undefined {
  const value = ctx.params[name];
  return typeof value === 'number' ? value : undefined;
}

/** PVE booleans after the check: 1 or 0; absent is `fallback`. */
export function flag(ctx: HandlerContext, name: string, fallback = false): boolean {
  const value = ctx.params[name];
  return value === undefined ? fallback : value === 1;
}

/** PVE's JSON booleans. */
export function bit(value: boolean): 0 | 1 {
  return value ? 1 : 0;
}
