// The scheduler at fleet size reads what each candidate needs from indexes
// built once per decision: the siblings still to be provisioned by where they
// are placed, and the image's rows by Provider.
import { describe, expect, it } from 'vitest';
import type { FailureDomainCapacity, Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { indexPending, pendingDemand } from '../../../controller/scheduler/capacity.js';
import { ImageRows } from '../../../controller/scheduler/image-readiness.js';
import { schedule } from '../../../controller/scheduler/schedule.js';
import { vmImage } from '../../support/backend-samples.js';
import { NS, provider, readyRow, scheduleInput, virtualMachine, vmClass, vsphereDomain } from './fixtures.js';

const ROOMY: FailureDomainCapacity = { cpus: 32, memoryMiB: 262144, freeMemoryMiB: 131072, storage: [{ target: 'ds-ssd', freeGiB: 2000 }] };
const classOf = (): ReturnType<typeof vmClass> => vmClass('standard');

/** Provider `p<i>` with `domains` failure domains `p<i>-dc1-c<j>`, each publishing room. */
function fleetProvider(i: number, domains: number): Provider {
  const name = `p${String(i).padStart(4, '0')}`;
  return provider(name, { failureDomains: Array.from({ length: domains }, (_, j) => ({ ...vsphereDomain(name, 'dc1', `c${j}`), capacity: ROOMY })) });
}

/** A VM placed on `providerName`/`failureDomain`; `status` adds to what it records. */
function placedOn(name: string, providerName: string, failureDomain: string, status: VirtualMachine['status'] = {}): VirtualMachine {
  const vm = virtualMachine(name, { scheduledOn: [providerName, failureDomain] });
  return { ...vm, status: { ...vm.status, ...status } };
}

describe('VirtualMachine scheduling over a large fleet', () => {
  it('takes off a failure domain only the siblings placed there and not provisioned yet, nor being deleted', () => {
    const p = fleetProvider(0, 3);
    const [c0, c1, c2] = (p.status?.failureDomains ?? []).map((failureDomain) => ({ provider: p, failureDomain }));
    const siblings = [
      placedOn('a', 'p0000', 'p0000-dc1-c0'),
      placedOn('b', 'p0000', 'p0000-dc1-c0'),
      placedOn('c', 'p0000', 'p0000-dc1-c1', { initialization: { provisioned: true } }),
      { ...placedOn('d', 'p0000', 'p0000-dc1-c1'), metadata: { name: 'd', namespace: NS, deletionTimestamp: '2026-01-01T00:00:00Z' } },
      placedOn('e', 'p0001', 'p0000-dc1-c2'),
      virtualMachine('unplaced'),
    ];
    const pending = indexPending(siblings);
    expect([c0, c1, c2].map((c) => (c ? pendingDemand(c, pending, classOf).length : -1))).toEqual([2, 0, 0]);
  });

  it("finds each Provider's image row by namespace and name among hundreds, the first row of a Provider counting", () => {
    const providers = Array.from({ length: 500 }, (_, i) => fleetProvider(i, 1));
    const rows = providers.map(readyRow);
    rows[250] = { providerNamespace: NS, providerName: 'p0250', ready: false, reason: 'ImageSourceNotFound', message: 'no template' };
    rows.push({ ...readyRow(fleetProvider(250, 1)) });
    const image = new ImageRows(vmImage('ubuntu-24.04', { rows }));
    const elsewhere = { ...fleetProvider(7, 1), metadata: { name: 'p0007', namespace: 'team-b' } };
    expect([providers[0], providers[499], providers[250], elsewhere].map((p) => (p ? image.whyNotReady(p) : 'missing'))).toEqual([
      undefined,
      undefined,
      'not ready (ImageSourceNotFound: no template)',
      'not reported by the Provider yet',
    ]);
  });

  it('places a VM among 200 Providers × 10 failure domains and 2,000 siblings where the fewest wait to be provisioned, on a Provider its image is ready on', () => {
    const providers = Array.from({ length: 200 }, (_, i) => fleetProvider(i, 10));
    // The image is ready on the last ten Providers only; every failure domain of theirs but one has a VM waiting.
    const ready = providers.slice(190);
    const name = (p: number): string => `p${String(p).padStart(4, '0')}`;
    const waiting = ready.flatMap((_, r) => Array.from({ length: 10 }, (_, fd) => [190 + r, fd] as const).filter(([p, fd]) => !(p === 193 && fd === 3)));
    const elsewhere = Array.from({ length: 2000 - waiting.length }, (_, i) => [i % 190, i % 10] as const);
    const siblings = [...waiting, ...elsewhere].map(([p, fd], i) => placedOn(`vm-${i}`, name(p), `${name(p)}-dc1-c${fd}`));
    const result = schedule(scheduleInput({ providers, siblings, classOf, image: vmImage('ubuntu-24.04', { rows: ready.map(readyRow) }) }));
    expect(result.ok && `${result.placement.providerName}/${result.placement.failureDomain.name}`).toBe('p0193/p0193-dc1-c3');
  });
});
