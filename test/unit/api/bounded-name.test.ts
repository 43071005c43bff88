// Names banlieue derives from a user's names (up to 253 characters) must fit
// the limits of what they name: a field manager and an Event's reporting
// instance (128), a Lease (a DNS subdomain of 253), a label value (63).
import { describe, expect, it } from 'vitest';
import { boundedName, OBJECT_NAME_MAX } from '../../../infra/api/bounded-name.js';
import { FieldManager } from '../../../infra/api/well-known.js';
import { providerLeaseName } from '../../../controller/cli/controller-command.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const longProvider = `${'host.'.repeat(50)}abc`; // 253 characters, a valid object name

describe('boundedName', () => {
  it('keeps a name that fits; cuts a longer one to its start and a hash of the whole', () => {
    expect(boundedName('short', 10)).toBe('short');
    const cut = boundedName('a'.repeat(300), 100);
    expect(cut).toHaveLength(100);
    expect(cut).toMatch(/^a{91}-[0-9a-f]{8}$/);
    expect(boundedName('a'.repeat(300), 100)).toBe(cut);
    expect(boundedName(`${'a'.repeat(299)}b`, 100)).not.toBe(cut);
  });

  it('never ends the start on a separator, so a DNS subdomain stays one', () => {
    expect(longProvider).toHaveLength(OBJECT_NAME_MAX);
    for (let max = 60; max < 80; max += 1) expect(boundedName(longProvider, max)).toMatch(DNS_SUBDOMAIN);
  });
});

describe('names derived from a Provider named with 253 characters', () => {
  it("a scoped provider role's field manager is at most 128 characters, and differs per Provider", () => {
    const manager = FieldManager.provider('cloud-hypervisor', longProvider);
    expect(manager.length).toBeLessThanOrEqual(128);
    expect(manager.startsWith('banlieue.io/provider-cloud-hypervisor/host.host.')).toBe(true);
    expect(FieldManager.provider('cloud-hypervisor', `${longProvider.slice(0, -1)}x`)).not.toBe(manager);
    expect(FieldManager.provider('cloud-hypervisor', 'host-a')).toBe('banlieue.io/provider-cloud-hypervisor/host-a');
  });

  it('its Lease name is a valid object name', () => {
    const lease = providerLeaseName('cloud-hypervisor', longProvider);
    expect(lease.length).toBeLessThanOrEqual(OBJECT_NAME_MAX);
    expect(lease).toMatch(DNS_SUBDOMAIN);
    expect(providerLeaseName('cloud-hypervisor', 'host-a')).toBe('banlieue-provider-cloud-hypervisor-host-a');
  });
});
