// The machine recipe's pure rules (kit/machine/decide.ts): what a task that ended says of the
// VM found, which steps a pass runs in which order, what it says when a task made nothing.
import { describe, expect, it } from 'vitest';
import type { PowerState } from '../../../../../infra/api/machine-fields.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../../../../controller/backends/backend-error.js';
import type { MachineAction } from '../../../../../controller/backends/backend.js';
import { decideIdentityActions, missingAfter, planSteps, waitingFor, type StepName } from '../../../../../controller/backends/kit/machine/decide.js';
import type { EndedTask } from '../../../../../controller/backends/kit/machine/steps.js';

const clone: EndedTask = { state: 'Ended', task: 'CloneVM_Task task-7', target: 'vm-42', creates: true, actions: ['Created'] };
const defined: EndedTask = { state: 'Ended', task: 'the definition of domain web', creates: true, actions: ['Created', 'GuestDataWritten'] };

describe('the Events of a VM found by UUID and mark', () => {
  it.each<[string, EndedTask | undefined, boolean, readonly MachineAction[]]>([
    ['the VM a clone made, when the clone names it', clone, true, ['Created']],
    ['a VM made within the pass (no target to compare)', defined, true, ['Created', 'GuestDataWritten']],
    ['a VM on its first boot no task of ours made (an orphan of a crash)', undefined, true, ['Adopted']],
    ['a VM on its first boot when the task ended worked on another VM (a taskRef naming a foreign task)', { ...clone, target: 'vm-9' }, true, ['Adopted']],
    ['a provisioned VM when the task ended worked on another VM: nothing', { ...clone, target: 'vm-9' }, false, []],
    ['a provisioned VM with no task: nothing', undefined, false, []],
    [
      'a provisioned VM whose own power task ended',
      { state: 'Ended', task: 'start task of VM 101 on pve1', target: 'vm-42', creates: false, actions: ['PoweredOn'] },
      false,
      ['PoweredOn'],
    ],
  ])('are those of %s', (_case, ended, firstBoot, actions) => {
    expect(decideIdentityActions(ended, 'vm-42', firstBoot)).toEqual(actions);
  });
});

describe('the steps of a pass on an owned VM', () => {
  it.each<[string, { firstBoot: boolean; specChanged: boolean }, boolean, PowerState, readonly StepName[]]>([
    ['writes guest data before a first boot, then powers', { firstBoot: true, specChanged: false }, false, 'PoweredOff', ['WriteGuestData', 'Power']],
    ['writes no guest data once the VM runs', { firstBoot: true, specChanged: false }, false, 'PoweredOn', ['Power']],
    ['writes no guest data after the first boot', { firstBoot: false, specChanged: false }, false, 'PoweredOff', ['Power']],
    ['resizes an off VM before powering it', { firstBoot: false, specChanged: true }, false, 'PoweredOff', ['Resize', 'Power']],
    [
      'resizes a running VM after the power step (a power-off may come first)',
      { firstBoot: false, specChanged: true },
      false,
      'PoweredOn',
      ['Power', 'Resize'],
    ],
    ['resizes a suspended VM after the power step', { firstBoot: false, specChanged: true }, false, 'Suspended', ['Power', 'Resize']],
    [
      'writes guest data, then resizes, on a first boot whose spec changed',
      { firstBoot: true, specChanged: true },
      false,
      'PoweredOff',
      ['WriteGuestData', 'Resize', 'Power'],
    ],
    [
      'does not resize the VM this pass created: it was made to the spec',
      { firstBoot: true, specChanged: true },
      true,
      'PoweredOff',
      ['WriteGuestData', 'Power'],
    ],
    ['only powers when nothing changed', { firstBoot: false, specChanged: false }, false, 'PoweredOn', ['Power']],
  ])('%s', (_case, options, created, power, steps) => {
    expect(planSteps(options, created, power)).toEqual(steps);
  });
});

describe('a creating task after which no VM carries the UUID', () => {
  it('is TaskFailed, naming the task and the UUID', () => {
    const error = missingAfter(clone, 'u-1');
    expect(isBackendError(error, BackendErrorKind.TaskFailed)).toBe(true);
    expect(error.message).toBe('CloneVM_Task task-7 succeeded but no VM carries UUID u-1');
  });

  it("is the task's own word when it has one (a clone that lost its name to a VM not the machine's)", () => {
    const lost = new BackendError(BackendErrorKind.Rejected, 'a VM named web already exists');
    expect(missingAfter({ ...clone, missing: lost }, 'u-1')).toBe(lost);
  });
});

describe('a deletion or release waiting for a task', () => {
  it('says which task and what waits', () => {
    expect(waitingFor('clone task of VM 101 on pve1', 'deleting')).toBe('waiting for clone task of VM 101 on pve1 to end before deleting the VM');
  });
});
