// The version gate. Upstream's provider refuses a VMM below 53.0 (upstream-backends §4.5,
// `VmmVersionUnsupported`): the request bodies banlieue sends are those of v53's API
// (`platform.system_uuid`, Landlock rules per tap, JSON error chains), and v53.0 is the
// release the vendored spec and the test peers are checked against.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { VmmErrorCode } from './vmm-error.js';
import type { VmmPingResponse } from './vmm-types.js';

/** The oldest Cloud Hypervisor release banlieue drives: [major, minor]. */
export const SUPPORTED_VMM_FLOOR = [53, 0] as const;
/** SUPPORTED_VMM_FLOOR as people write it. */
export const SUPPORTED_VMM_FLOOR_LABEL = `v${SUPPORTED_VMM_FLOOR.join('.')}`;

/** `53.0.0`, `v53.0`, `v53.0-12-gabc` → [53, 0]; undefined when there is no version in it. */
export function parseVmmVersion(version: string): readonly [number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** Throws a Rejected BackendError (code VmmVersionUnsupported) when `ping` is below the floor or unreadable. */
export function checkVmmVersion(ping: VmmPingResponse, where: string): void {
  const parsed = parseVmmVersion(ping.version);
  const [floorMajor, floorMinor] = SUPPORTED_VMM_FLOOR;
  if (parsed) {
    const [major, minor] = parsed;
    if (major > floorMajor || (major === floorMajor && minor >= floorMinor)) return;
  }
  const what = parsed ? `is older than` : `is not a version; need at least`;
  throw new BackendError(
    BackendErrorKind.Rejected,
    `cloud-hypervisor at ${where} reports version "${ping.version}", which ${what} the supported floor ${SUPPORTED_VMM_FLOOR_LABEL}`,
    {
      code: VmmErrorCode.VmmVersionUnsupported,
    },
  );
}
