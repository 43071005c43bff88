// What a running VM's migrationPolicy allows once its placement is impossible:
// stay (saying why), or recreate — announced on the VM first, done on the pass
// that sees the announcement, within the namespace's recreates per minute.
import { describe, expect, it } from 'vitest';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import { Annotation } from '../../../../infra/api/well-known.js';
import { decideMove, type MoveInput } from '../../../../controller/reconcilers/virtual-machine/drift.js';
import { aVm } from './fixtures.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const GONE = { reason: Reason.ProviderGone, message: 'Provider vsphere-a it runs on no longer exists' } as const;

function input(vm: VirtualMachine, change: Partial<MoveInput> = {}): MoveInput {
  return { vm, impossible: GONE, from: 'vsphere-a/fd-1', to: { ok: true, where: 'vsphere-b/fd-1' }, machine: 'VSphereMachine web-1', now: NOW, ...change };
}

const withPlacementValid = (vm: VirtualMachine, reason: string, message = ''): VirtualMachine => ({
  ...vm,
  status: { conditions: [{ type: ConditionType.PlacementValid, status: 'False', reason, message, lastTransitionTime: NOW.toISOString() }] },
});

describe('a VM whose placement is impossible', () => {
  it.each<[string, VirtualMachine, string]>([
    ['under the default policy (manual)', aVm(), `annotate ${Annotation.migrate}=true to recreate it on vsphere-b/fd-1 (its VM and disks are deleted`],
    ['under manual', aVm({ migrationPolicy: 'manual' }), `annotate ${Annotation.migrate}=true`],
    ['under never', aVm({ migrationPolicy: 'never' }), 'migrationPolicy never keeps it on vsphere-a/fd-1'],
    ['with nowhere to go, even under automatic', aVm({ migrationPolicy: 'automatic' }), 'there is nowhere to move it (no failure domain fits)'],
  ])('stays %s, PlacementValid=False saying why, with a Warning when that begins', (name, vm, says) => {
    const to = name.startsWith('with nowhere') ? ({ ok: false, message: 'no failure domain fits' } as const) : undefined;
    const move = decideMove(input(vm, to ? { to } : {}));
    expect(move).toMatchObject({ deleteMachines: false, takesRecreate: false });
    expect(move.placementValid).toMatchObject({ status: 'False', reason: Reason.ProviderGone, message: expect.stringContaining(says) as unknown as string });
    expect(move.placementValid.message?.startsWith(GONE.message)).toBe(true);
    expect(move.event).toEqual({ reason: Reason.ProviderGone, message: move.placementValid.message });
    const again = decideMove(input(withPlacementValid(vm, Reason.ProviderGone, move.placementValid.message), to ? { to } : {}));
    expect(again.event).toBeUndefined();
  });

  it.each<[string, VirtualMachine]>([
    ['automatic', aVm({ migrationPolicy: 'automatic' })],
    ['manual annotated to migrate', aVm({ migrationPolicy: 'manual' }, { annotations: { [Annotation.migrate]: 'true' } })],
  ])('under %s: announces the recreate, naming both placements, and deletes only once the VM says so', (_, vm) => {
    const announce = decideMove(input(vm));
    expect(announce).toMatchObject({ deleteMachines: false, takesRecreate: true });
    expect(announce.placementValid).toMatchObject({ status: 'False', reason: Reason.Recreating });
    expect(announce.placementValid.message).toContain(
      'recreating it on vsphere-b/fd-1: VSphereMachine web-1 on vsphere-a/fd-1 is deleted with its VM and disks',
    );
    expect(announce.event).toEqual({ reason: Reason.Recreating, message: announce.placementValid.message });
    const done = decideMove(input(withPlacementValid(vm, Reason.Recreating, announce.placementValid.message)));
    expect(done).toMatchObject({ deleteMachines: true, takesRecreate: false });
    expect(done.event).toBeUndefined();
    // Announced for another target (the scheduler now says elsewhere): announced again, not deleted.
    const retargeted = decideMove(
      input(withPlacementValid(vm, Reason.Recreating, announce.placementValid.message), { to: { ok: true, where: 'vsphere-c/fd-9' } }),
    );
    expect(retargeted).toMatchObject({ deleteMachines: false, takesRecreate: true });
  });

  it('defers a recreate the namespace has no budget left for, until a recreate is available again', () => {
    const nextAt = new Date(NOW.getTime() + 30_000);
    const move = decideMove(input(aVm({ migrationPolicy: 'automatic' }), { budget: { limit: 3, available: false, nextAt } }));
    expect(move).toMatchObject({ deleteMachines: false, takesRecreate: false, requeueAfterMs: 30_001 });
    expect(move.placementValid).toMatchObject({
      reason: Reason.RecreateDeferred,
      message: expect.stringContaining(
        `3 VirtualMachines of namespace team-a were recreated in the last minute: tried again at ${nextAt.toISOString()}`,
      ) as unknown as string,
    });
  });

  it('deletes an announced recreate whatever the budget says now: the announcement took it', () => {
    const vm = aVm({ migrationPolicy: 'automatic' });
    const announce = decideMove(input(vm));
    const done = decideMove(
      input(withPlacementValid(vm, Reason.Recreating, announce.placementValid.message), { budget: { limit: 1, available: false, nextAt: NOW } }),
    );
    expect(done.deleteMachines).toBe(true);
  });
});
