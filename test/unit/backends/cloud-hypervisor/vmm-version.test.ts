// The version gate: v53.0 is the floor (upstream-backends §4.5), named in the refusal.
import { describe, expect, it } from 'vitest';
import { checkVmmVersion, parseVmmVersion } from '../../../../controller/backends/cloud-hypervisor/client/vmm-version.js';

describe('VMM version gate', () => {
  it.each([
    ['53.0.0', [53, 0]],
    ['v53.0', [53, 0]],
    ['v54.1-12-gabcdef', [54, 1]],
    ['dev', undefined],
  ])('reads %s as %j', (version, parsed) => {
    expect(parseVmmVersion(version)).toEqual(parsed);
  });

  it.each(['53.0.0', '53.1.0', '60.0.0'])('accepts %s', (version) => {
    expect(() => checkVmmVersion({ version }, '/run/x/api.sock')).not.toThrow();
  });

  it.each([
    ['52.0.0', 'is older than the supported floor v53.0'],
    ['48.0.0', 'is older than the supported floor v53.0'],
    ['', 'is not a version; need at least the supported floor v53.0'],
  ])('refuses %j as Rejected VmmVersionUnsupported, naming the floor', (version, message) => {
    expect(() => checkVmmVersion({ version }, '/run/x/api.sock')).toThrow(
      expect.objectContaining({ kind: 'Rejected', code: 'VmmVersionUnsupported', message: expect.stringContaining(message) }),
    );
  });
});
