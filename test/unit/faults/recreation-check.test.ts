import { describe, expect, it } from 'vitest';
import type { BackendVm, FleetObject } from '../../faults/fleet-check.js';
import { checkRecreation, NO_RECREATION, toRecreationReport, type FleetObservation } from '../../faults/recreation-check.js';
import { withOverrides, type Overrides } from '../../support/overrides.js';

const vm = (props: Overrides<FleetObject> = {}): FleetObject =>
  withOverrides({ name: 'a', uid: 'vm-uid-1', deleting: false, finalizers: ['banlieue.io/vm'], ready: true }, props);
const machine = (props: Overrides<FleetObject> = {}): FleetObject =>
  withOverrides(
    {
      name: 'a',
      uid: 'machine-uid-1',
      deleting: false,
      finalizers: ['banlieue.io/machine'],
      ready: true,
      providerID: 'vsphere://u1',
      uuid: 'u1',
    },
    props,
  );
const backendVm = (props: Overrides<BackendVm> = {}): BackendVm => withOverrides({ name: 'a', uuid: 'u1', instance: 'vm-42' }, props);
const seen = (props: { vm?: Overrides<FleetObject>; machine?: Overrides<FleetObject> | null; backend?: readonly BackendVm[] } = {}): FleetObservation => ({
  vms: [vm(props.vm)],
  machines: props.machine === null ? [] : [machine(props.machine ?? {})],
  backend: props.backend ?? [backendVm()],
});

/** The report after these checks, in order, the n-th at `t<n>`. */
const afterChecks = (...checks: FleetObservation[]): ReturnType<typeof toRecreationReport> =>
  toRecreationReport(checks.reduce((state, o, i) => checkRecreation(state, o, `t${i}`), NO_RECREATION));

describe('fault run: VMs re-created unasked', () => {
  it('judges only VirtualMachines seen Ready with the backend VM their machine names', () => {
    const report = afterChecks(seen({ vm: { ready: false } }), seen({ backend: [] }), seen({ machine: { providerID: undefined, uuid: undefined } }));
    expect(report).toEqual({ recreated: 0, watched: 0, watchedById: 0, details: [] });
    expect(afterChecks(seen())).toMatchObject({ watched: 1, watchedById: 1 });
    expect(afterChecks(seen({ backend: [backendVm({ instance: undefined })] }))).toMatchObject({ watched: 1, watchedById: 0 });
  });

  it.each<[string, FleetObservation[]]>([
    ['the same machine and backend VM at every check', [seen(), seen(), seen()]],
    [
      'a VM that changed before it was first Ready (its clone retried)',
      [seen({ vm: { ready: false }, backend: [backendVm({ instance: 'vm-41' })] }), seen(), seen()],
    ],
    [
      'a VirtualMachine being deleted, its machine and backend VM gone',
      [seen(), seen({ vm: { deleting: true }, machine: { deleting: true } }), seen({ vm: { deleting: true }, machine: null, backend: [] })],
    ],
    ['a machine read between two lists, missing, its backend VM kept', [seen(), seen({ machine: null }), seen()]],
    [
      'a second backend VM of the UUID beside the first (a duplicate, counted apart)',
      [seen(), seen({ backend: [backendVm(), backendVm({ instance: 'vm-43' })] })],
    ],
    ['a VirtualMachine not Ready for a while, the same VM throughout', [seen(), seen({ vm: { ready: false } }), seen()]],
    [
      'a backend that shows no id of its own, the UUID kept',
      [seen({ backend: [backendVm({ instance: undefined })] }), seen({ backend: [backendVm({ instance: undefined })] })],
    ],
    [
      'a VirtualMachine deleted and created again by its user (another uid)',
      [
        seen(),
        seen({
          vm: { uid: 'vm-uid-2' },
          machine: { uid: 'machine-uid-2', providerID: 'vsphere://u2', uuid: 'u2' },
          backend: [backendVm({ uuid: 'u2', instance: 'vm-50' })],
        }),
      ],
    ],
  ])('counts none for %s', (_what, checks) => {
    expect(afterChecks(...checks)).toMatchObject({ recreated: 0, details: [] });
  });

  it.each<[string, FleetObservation, string]>([
    [
      'its machine replaced',
      seen({ machine: { uid: 'machine-uid-2', providerID: 'vsphere://u2', uuid: 'u2' }, backend: [backendVm({ uuid: 'u2', instance: 'vm-50' })] }),
      'machine replaced (metadata.uid machine-uid-1 → machine-uid-2)',
    ],
    [
      'its machine naming another VM',
      seen({ machine: { providerID: 'vsphere://u2', uuid: 'u2' } }),
      'machine spec.providerID changed (vsphere://u1 → vsphere://u2)',
    ],
    ['its backend VM gone', seen({ backend: [] }), 'backend VM u1 gone (was vm-42)'],
    ['its backend VM made again with the same UUID', seen({ backend: [backendVm({ instance: 'vm-77' })] }), 'backend VM u1 replaced (was vm-42, now vm-77)'],
    ['its backend VM gone, its machine missing', seen({ machine: null, backend: [] }), 'backend VM u1 gone (was vm-42)'],
  ])('counts a Ready VirtualMachine not being deleted with %s, and says what changed and when', (_what, later, change) => {
    const report = afterChecks(seen(), later);
    expect(report.recreated).toBe(1);
    expect(report.details).toContain(`recreated: a: ${change} (at t1)`);
  });

  it('counts a VirtualMachine once however often it is re-created, each time said, its identity taken again at its next Ready', () => {
    const second = { machine: { uid: 'machine-uid-2', providerID: 'vsphere://u2', uuid: 'u2' }, backend: [backendVm({ uuid: 'u2', instance: 'vm-50' })] };
    const report = afterChecks(seen(), seen({ ...second, vm: { ready: false } }), seen(second), seen(second), seen({ ...second, backend: [] }));
    expect(report.recreated).toBe(1);
    expect(report.details).toEqual([
      'recreated: a: machine replaced (metadata.uid machine-uid-1 → machine-uid-2) (at t1)',
      'recreated: a: backend VM u1 gone (was vm-42) (at t1)',
      'recreated: a: backend VM u2 gone (was vm-50) (at t4)',
    ]);
  });

  it('judges each VirtualMachine on its own', () => {
    const two = (bInstance: string): FleetObservation => ({
      vms: [vm(), vm({ name: 'b', uid: 'vm-uid-b' })],
      machines: [machine(), machine({ name: 'b', uid: 'machine-uid-b', providerID: 'vsphere://ub', uuid: 'ub' })],
      backend: [backendVm(), backendVm({ name: 'b', uuid: 'ub', instance: bInstance })],
    });
    expect(afterChecks(two('vm-43'), two('vm-44'))).toEqual({
      recreated: 1,
      watched: 2,
      watchedById: 2,
      details: ['recreated: b: backend VM ub replaced (was vm-43, now vm-44) (at t1)'],
    });
  });
});
