// Domains through the libvirt client against a real libvirtd (test driver):
// define/start/state/shutdown/destroy/undefine round trips, libvirt's own
// errors as typed errors, many calls over one connection, lifecycle events.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendErrorKind, isBackendError } from '../../../controller/backends/backend-error.js';
import { AddressSource, DomainState, LifecycleEvent, UndefineFlags } from '../../../controller/backends/libvirt/client/constants.js';
import type { DomainLifecycleEvent } from '../../../controller/backends/libvirt/client/domain-events.js';
import { ErrorCode, isLibvirtError } from '../../../controller/backends/libvirt/client/libvirt-error.js';
import { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { waitFor } from '../../support/wait.js';
import { startLibvirtd, type Libvirtd } from './libvirtd.js';

let daemon: Libvirtd;
let client: LibvirtClient;

beforeAll(async () => {
  daemon = await startLibvirtd({ listenNetwork: false });
  // test:///default is reset when its last connection closes: this one stays open for the whole file.
  client = await LibvirtClient.connect({ uri: `test+unix:///default?socket=${daemon.socketPath}` });
});

afterAll(async () => {
  await client?.close();
  await daemon?.stop();
});

function domainXml(name: string, uuid: string): string {
  return `<domain type='test'>
  <name>${name}</name>
  <uuid>${uuid}</uuid>
  <memory unit='MiB'>128</memory>
  <vcpu>2</vcpu>
  <os><type>hvm</type></os>
  <devices>
    <interface type='network'><source network='default'/><mac address='52:54:00:12:34:56'/></interface>
  </devices>
</domain>`;
}

describe('libvirt domains', () => {
  it('defines, starts, shuts down, destroys and undefines a domain found by its UUID', async () => {
    const uuid = randomUUID();
    const defined = await client.domains.define(domainXml('round-trip', uuid));
    expect(defined).toMatchObject({ name: 'round-trip', uuid, id: -1 });
    expect((await client.domains.state(defined)).state).toBe(DomainState.Shutoff);

    const running = await client.domains.start(defined);
    expect(running.id).toBeGreaterThan(0);
    const found = await client.domains.lookupByUuid(uuid);
    expect(found).toEqual(running);
    expect(await client.domains.info(found)).toMatchObject({ state: DomainState.Running, maxMemoryKiB: 131072, vcpus: 2 });
    expect(await client.domains.xmlDesc(found)).toContain(`<uuid>${uuid}</uuid>`);
    const [iface] = await client.domains.interfaceAddresses(found, AddressSource.Lease);
    expect(iface?.mac).toBe('52:54:00:12:34:56');
    expect(iface?.addresses[0]?.type).toBe('ipv4');

    await client.domains.shutdown(found);
    expect((await client.domains.state(found)).state).toBe(DomainState.Shutoff);
    await client.domains.start(found);
    await client.domains.destroy(found);
    expect((await client.domains.state(found)).state).toBe(DomainState.Shutoff);

    await client.domains.undefine(found, UndefineFlags.ManagedSave);
    await expect(client.domains.lookupByUuid(uuid)).rejects.toSatisfy((e) => isBackendError(e, BackendErrorKind.NotFound));
  });

  it('suspends, resumes and managed-saves a running domain', async () => {
    const domain = await client.domains.start(await client.domains.define(domainXml('paused', randomUUID())));
    await client.domains.suspend(domain);
    expect((await client.domains.state(domain)).state).toBe(DomainState.Paused);
    await client.domains.resume(domain);
    await client.domains.managedSave(domain);
    expect((await client.domains.state(domain)).state).toBe(DomainState.Shutoff);
    expect(await client.domains.hasManagedSaveImage(domain)).toBe(true);
    await client.domains.managedSaveRemove(domain);
    await client.domains.undefine(domain);
  });

  it('reports a missing domain as NotFound carrying libvirt code 42', async () => {
    const error = await client.domains.lookupByName('no-such-domain').catch((e: unknown) => e);
    expect(isBackendError(error, BackendErrorKind.NotFound)).toBe(true);
    expect(isLibvirtError(error, ErrorCode.NO_DOMAIN)).toBe(true);
    expect(error).toMatchObject({ code: 'VIR_ERR_NO_DOMAIN', libvirtCode: 42 });
    expect((error as Error).message).toMatch(/^DOMAIN_LOOKUP_BY_NAME: Domain not found/);
  });

  it('reports an operation the domain state does not allow as Rejected', async () => {
    const domain = await client.domains.define(domainXml('stopped', randomUUID()));
    const error = await client.domains.destroy(domain).catch((e: unknown) => e);
    expect(isBackendError(error, BackendErrorKind.Rejected)).toBe(true);
    expect(isLibvirtError(error, ErrorCode.OPERATION_INVALID)).toBe(true);
    await client.domains.undefine(domain);
  });

  it('answers 50 concurrent calls over one connection, each with its own reply', async () => {
    const names = Array.from({ length: 50 }, (_, i) => `concurrent-${i}`);
    const defined = await Promise.all(names.map((name) => client.domains.define(domainXml(name, randomUUID()))));
    const found = await Promise.all(defined.map((d) => client.domains.lookupByUuid(d.uuid)));
    expect(found.map((d) => d.name)).toEqual(names);
    await Promise.all(defined.map((d) => client.domains.undefine(d)));
  });

  it('delivers lifecycle events of domains changed by another connection', async () => {
    const events: DomainLifecycleEvent[] = [];
    const stop = await client.events.onLifecycle((event) => events.push(event));
    const other = await LibvirtClient.connect({ uri: `test+unix:///default?socket=${daemon.socketPath}` });
    try {
      const uuid = randomUUID();
      const domain = await other.domains.define(domainXml('watched', uuid));
      await other.domains.start(domain);
      await other.domains.destroy(domain);
      await other.domains.undefine(domain);
      const seen = await waitFor(
        'four lifecycle events of the watched domain',
        () => {
          const mine = events.filter((e) => e.domain.uuid === uuid).map((e) => e.event);
          return mine.length >= 4 && mine;
        },
        60_000,
      );
      expect(seen).toEqual([LifecycleEvent.Defined, LifecycleEvent.Started, LifecycleEvent.Stopped, LifecycleEvent.Undefined]);
    } finally {
      await stop();
      await other.close();
    }
  });

  it('iterates lifecycle events until the signal aborts', async () => {
    const controller = new AbortController();
    const uuid = randomUUID();
    const collected: number[] = [];
    const events = await client.events.lifecycle(controller.signal);
    const iterating = (async () => {
      for await (const event of events) {
        if (event.domain.uuid !== uuid) continue;
        collected.push(event.event);
        if (collected.length === 2) controller.abort();
      }
    })();
    const domain = await client.domains.define(domainXml('iterated', uuid));
    await client.domains.undefine(domain);
    await iterating;
    expect(collected).toEqual([LifecycleEvent.Defined, LifecycleEvent.Undefined]);
  });
});
