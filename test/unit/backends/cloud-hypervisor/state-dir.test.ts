// Where a machine's VMM files live, and what names are refused.
import { describe, expect, it } from 'vitest';
import { DEFAULT_STATE_ROOT, isMachineUuid, vmmPaths } from '../../../../controller/backends/cloud-hypervisor/state-dir.js';

const UUID = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';

describe('VMM state directory', () => {
  it('puts socket, pidfile and logs in <root>/<uuid>/', () => {
    expect(vmmPaths(DEFAULT_STATE_ROOT, UUID)).toEqual({
      uuid: UUID,
      dir: `/var/lib/banlieue/cloud-hypervisor/${UUID}`,
      apiSocket: `/var/lib/banlieue/cloud-hypervisor/${UUID}/api.sock`,
      pidFile: `/var/lib/banlieue/cloud-hypervisor/${UUID}/vmm.pid`,
      logFile: `/var/lib/banlieue/cloud-hypervisor/${UUID}/vmm.log`,
      serialLog: `/var/lib/banlieue/cloud-hypervisor/${UUID}/serial.log`,
    });
  });

  it.each(['../etc', UUID.toUpperCase(), `${UUID}/x`, ''])('refuses machine name %j', (name) => {
    expect(isMachineUuid(name)).toBe(false);
    expect(() => vmmPaths(DEFAULT_STATE_ROOT, name)).toThrow(/is not a lower-case UUID/);
  });

  it('refuses a root whose socket path would not fit a unix socket address', () => {
    expect(() => vmmPaths(`/${'r'.repeat(80)}`, UUID)).toThrow(/exceeds 107 bytes/);
  });
});
