// What `banlieue vm start|stop|restart` changes in a VirtualMachine's spec, and what it says (pure).
import { describe, expect, it } from 'vitest';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { decideVmChange, type VmVerb } from '../../../controller/cli/vm-command.js';

const now = new Date('2026-12-02T18:10:00.123Z');
const vm = (spec: Partial<VirtualMachine['spec']>): VirtualMachine => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  metadata: { name: 'web-1', namespace: 'team-a' },
  spec: { classRef: { name: 'small' }, imageRef: { name: 'debian' }, ...spec },
  status: { observedPowerState: 'PoweredOn' },
});

describe('banlieue vm verbs', () => {
  it.each<[VmVerb, Partial<VirtualMachine['spec']>, unknown]>([
    ['stop', {}, { spec: { desiredPowerState: 'PoweredOff' } }],
    ['start', { desiredPowerState: 'PoweredOff' }, { spec: { desiredPowerState: 'PoweredOn' } }],
    ['start', {}, undefined],
    ['stop', { desiredPowerState: 'PoweredOff' }, undefined],
    ['restart', {}, { spec: { restartRequestedAt: '2026-12-02T18:10:00.123Z' } }],
    ['restart', { restartRequestedAt: '2026-12-01T00:00:00.000Z' }, { spec: { restartRequestedAt: '2026-12-02T18:10:00.123Z' } }],
  ])('%s on a VM with spec %j patches %j', (verb, spec, patch) => {
    expect(decideVmChange(verb, vm(spec), now).patch).toEqual(patch);
  });

  it('says what it changed, and that nothing changed when the VM is already so', () => {
    expect(decideVmChange('stop', vm({}), now).said).toBe(
      'VirtualMachine team-a/web-1: spec.desiredPowerState PoweredOn → PoweredOff: its guest is asked to shut down, and the VM is powered off once it has (or after the grace period)',
    );
    expect(decideVmChange('start', vm({}), now).said).toBe(
      'VirtualMachine team-a/web-1 is already to be PoweredOn (spec.desiredPowerState); it is PoweredOn: nothing changed',
    );
  });

  it('refuses to restart a VM that is to be off, and says how to start it', () => {
    expect(() => decideVmChange('restart', vm({ desiredPowerState: 'PoweredOff' }), now)).toThrow(
      'VirtualMachine team-a/web-1 is to be PoweredOff (spec.desiredPowerState), so there is nothing to restart: start it with `banlieue vm start web-1`',
    );
  });
});
