// Answers of the VMM → the wire types, checked where the client relies on them (a
// known VmState, a version string) rather than trusted: a body that is not what the
// spec says leaves as an Unreachable BackendError naming the call, never as a
// TypeError deep in the caller.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { VmState, type VmConfig, type VmInfo, type VmmPingResponse } from './vmm-types.js';

const STATES = new Set<string>(Object.values(VmState));

export function decodePing(label: string, body: string): VmmPingResponse {
  const value = parseObject(label, body);
  if (typeof value.version !== 'string') throw malformed(label, 'no "version" string');
  return {
    version: value.version,
    ...(typeof value.build_version === 'string' ? { build_version: value.build_version } : {}),
    ...(typeof value.pid === 'number' ? { pid: value.pid } : {}),
    ...(Array.isArray(value.features) ? { features: value.features.filter((f): f is string => typeof f === 'string') } : {}),
  };
}

export function decodeVmInfo(label: string, body: string): VmInfo {
  const value = parseObject(label, body);
  if (typeof value.state !== 'string' || !STATES.has(value.state)) throw malformed(label, `unknown state ${JSON.stringify(value.state)}`);
  const config = value.config;
  if (!isRecord(config) || !isRecord(config.payload)) throw malformed(label, 'no config with a payload');
  return {
    // The VMM's echo of a VmConfig it accepted, with its defaults filled in: kept whole.
    config: config as unknown as VmConfig,
    state: value.state as VmState,
    ...(typeof value.memory_actual_size === 'number' ? { memory_actual_size: value.memory_actual_size } : {}),
  };
}

function parseObject(label: string, body: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (cause) {
    throw malformed(label, `not JSON (${(cause as Error).message})`);
  }
  if (!isRecord(value)) throw malformed(label, 'not a JSON object');
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(label: string, why: string): BackendError {
  return new BackendError(BackendErrorKind.Unreachable, `${label}: the VMM's answer is malformed: ${why}`, { code: 'MalformedResponse' });
}
