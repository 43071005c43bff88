// What a machine's deletion does to its VM and its IPAddressClaims as spec.deletionPolicy says,
// and the Events that tell the user (decide-deletion.ts).
import { describe, expect, it } from 'vitest';
import {
  deletingMessage,
  deletionEvents,
  deletionPolicyOf,
  keepsClaims,
  type VmFate,
} from '../../../../controller/reconcilers/infra-machine/decide-deletion.js';

const UUID = '4b8f2c1e-7a3d-5e6f-8a9b-0c1d2e3f4a5b';
const retained: VmFate = { kind: 'retained', ref: 'vm-42', provider: 'vc1' };
const notOwned: VmFate = { kind: 'leftAlone', reason: 'VMNotOwned', message: `the VM with UUID ${UUID} carries no banlieue ownership mark` };
const providerGone: VmFate = { kind: 'leftAlone', reason: 'ProviderNotFound', message: 'Provider vc1 not found' };

describe('machine deletion policy', () => {
  it.each([
    ['unset', {}, 'Delete'],
    ['Delete', { deletionPolicy: 'Delete' }, 'Delete'],
    ['Retain', { deletionPolicy: 'Retain' }, 'Retain'],
    ['a value this version does not know', { deletionPolicy: 'Snapshot' }, 'Delete'],
  ])('reads %s as %s', (_what, spec, policy) => {
    expect(deletionPolicyOf({ spec })).toBe(policy);
  });

  it('says from the first pass whether the VM is deleted or released', () => {
    expect(deletingMessage('Delete', UUID)).toBe(`deleting the VM with UUID ${UUID}`);
    expect(deletingMessage('Retain', UUID)).toBe(`releasing the VM with UUID ${UUID}: deletionPolicy Retain leaves it on the backend`);
    expect(deletingMessage('Retain', undefined)).toBe('deleting');
  });

  it.each<[string, 'Delete' | 'Retain', VmFate, boolean]>([
    ['Delete destroyed the VM', 'Delete', { kind: 'destroyed' }, false],
    ['Delete found the VM not its own', 'Delete', notOwned, false],
    ['Delete could not reach the Provider', 'Delete', providerGone, false],
    ['Retain released the VM', 'Retain', retained, true],
    ['Retain found the VM not its own (it may still use the addresses)', 'Retain', notOwned, true],
    ['Retain could not reach the Provider (the VM may still run)', 'Retain', providerGone, true],
    ['Retain found no VM', 'Retain', { kind: 'none' }, false],
    ['Retain never created one', 'Retain', { kind: 'none', nothingCreated: 'no failure domain' }, false],
  ])('keeps the IPAddressClaims only while a VM may hold their addresses: %s', (_case, policy, fate, kept) => {
    expect(keepsClaims(policy, fate)).toBe(kept);
  });
});

describe('machine deletion Events', () => {
  it('names the retained VM, its UUID and Provider, says banlieue lets it go, and names the kept claims', () => {
    expect(deletionEvents(retained, UUID, { kept: true, names: ['web-1-0-0', 'web-1-1-0'] })).toEqual([
      {
        type: 'Normal',
        reason: 'VMRetained',
        message: `Retained VM vm-42 (UUID ${UUID}) on Provider vc1 as it is (deletionPolicy Retain): its banlieue ownership mark is removed and banlieue no longer manages it; its IPAddressClaims web-1-0-0, web-1-1-0 are kept, their addresses still allocated (delete them once the VM no longer needs them)`,
      },
    ]);
  });

  it('says nothing of claims when the machine had none', () => {
    expect(deletionEvents(retained, UUID, { kept: true, names: [] }).map((e) => e.message)).toEqual([
      `Retained VM vm-42 (UUID ${UUID}) on Provider vc1 as it is (deletionPolicy Retain): its banlieue ownership mark is removed and banlieue no longer manages it`,
    ]);
  });

  it('says a destroyed VM and its released addresses as before', () => {
    expect(deletionEvents({ kind: 'destroyed' }, UUID, { kept: false, names: ['web-1-0-0'] })).toEqual([
      { type: 'Normal', reason: 'Deleted', message: `Deleted the VM with UUID ${UUID}` },
      { type: 'Normal', reason: 'IPAddressesReleased', message: 'Deleted IPAddressClaims web-1-0-0' },
    ]);
  });

  it.each<[string, VmFate, string, string]>([
    ['not its own', notOwned, 'VMNotOwned', `the VM with UUID ${UUID} carries no banlieue ownership mark; left on the backend`],
    ['beyond a Provider gone', providerGone, 'ProviderNotFound', `Provider vc1 not found; the VM (UUID ${UUID}), if any, is left on the backend`],
  ])('warns of a VM left %s, and of the claims kept for it', (_case, fate, reason, message) => {
    expect(deletionEvents(fate, UUID, { kept: true, names: ['web-1-0-0'] })).toEqual([
      {
        type: 'Warning',
        reason,
        message: `${message}; its IPAddressClaims web-1-0-0 are kept, their addresses still allocated (delete them once the VM no longer needs them)`,
      },
    ]);
  });

  it('says why nothing was deleted when nothing was created, and no Event when no VM was found', () => {
    expect(deletionEvents({ kind: 'none', nothingCreated: 'failure domain zone-a is not published' }, UUID, { kept: false, names: [] })).toEqual([
      { type: 'Normal', reason: 'NothingCreated', message: 'failure domain zone-a is not published; no VM was created for this machine, so none is deleted' },
    ]);
    expect(deletionEvents({ kind: 'none' }, UUID, { kept: false, names: [] })).toEqual([]);
  });
});
