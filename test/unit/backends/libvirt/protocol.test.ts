// The libvirt client's protocol table against libvirt's own `.x` files
// (test/fixtures/libvirt/, v9.0.0): every procedure number, every args/ret/msg
// layout, the shared handles, the error record, the message header and the
// keepalive program. A layout written by hand that drifts fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MESSAGE_MAX, STREAM_CHUNK_MAX, messageHeader } from '../../../../controller/backends/libvirt/client/framing.js';
import { Events, Procedures, REMOTE_PROGRAM, REMOTE_PROTOCOL_VERSION } from '../../../../controller/backends/libvirt/client/procedures.js';
import {
  REMOTE_STRING_MAX,
  remoteError,
  remoteNonnullDomain,
  remoteNonnullNetwork,
  remoteNonnullStoragePool,
  remoteNonnullStorageVol,
} from '../../../../controller/backends/libvirt/client/remote-types.js';
import { KEEPALIVE_PROGRAM, KEEPALIVE_PROTOCOL_VERSION, KeepaliveProcedure } from '../../../../controller/backends/libvirt/client/rpc-connection.js';
import type { XdrStruct, XdrType } from '../../../../controller/backends/libvirt/client/xdr-schema.js';
import { XdrSpec } from './xdr-spec.js';

const fixture = (name: string): string => readFileSync(new URL(`../../../fixtures/libvirt/${name}`, import.meta.url), 'utf8');
const spec = new XdrSpec([fixture('virnetprotocol.x'), fixture('remote_protocol.x'), fixture('virkeepaliveprotocol.x')]);

const procedures = Object.entries(Procedures);
const numbered = procedures.map(([key, procedure]) => [key, procedure.name, procedure] as const);

/** rpcgen's names: `remote_<procedure in lower case>_args` / `_ret` / `_msg`. */
const structName = (procedure: string, suffix: 'args' | 'ret' | 'msg'): string => `remote_${procedure.toLowerCase()}_${suffix}`;

function expectLayout(type: XdrType<unknown>, expectedName: string): void {
  if (type.spec === 'void') {
    expect(spec.hasStruct(expectedName), `${expectedName} exists in the .x but the client sends/reads nothing`).toBe(false);
    return;
  }
  expect((type as XdrStruct<unknown>).name).toBe(expectedName);
  expect(type.spec).toBe(spec.spec(expectedName));
}

describe('libvirt protocol table', () => {
  it('names the remote program, its version and the limits as remote_protocol.x and virnetprotocol.x do', () => {
    expect(spec.constants.get('REMOTE_PROGRAM')).toBe(REMOTE_PROGRAM);
    expect(spec.constants.get('REMOTE_PROTOCOL_VERSION')).toBe(REMOTE_PROTOCOL_VERSION);
    expect(spec.constants.get('REMOTE_STRING_MAX')).toBe(REMOTE_STRING_MAX);
    expect(spec.constants.get('VIR_NET_MESSAGE_MAX')).toBe(MESSAGE_MAX);
    expect(spec.constants.get('VIR_NET_MESSAGE_LEGACY_PAYLOAD_MAX')).toBe(STREAM_CHUNK_MAX);
  });

  it.each(numbered)('numbers %s as REMOTE_PROC_%s', (_key, _name, procedure) => {
    expect(spec.enumValues.get(`REMOTE_PROC_${procedure.name}`)).toBe(procedure.number);
  });

  it.each(procedures)('lays out the args and ret of %s as the .x does', (_key, procedure) => {
    expectLayout(procedure.args, structName(procedure.name, 'args'));
    expectLayout(procedure.ret, structName(procedure.name, 'ret'));
  });

  it.each(Object.entries(Events))('numbers and lays out the event %s as the .x does', (_key, event) => {
    expect(spec.enumValues.get(`REMOTE_PROC_${event.name}`)).toBe(event.number);
    expectLayout(event.msg, structName(event.name, 'msg'));
  });

  it.each([remoteNonnullDomain, remoteNonnullNetwork, remoteNonnullStoragePool, remoteNonnullStorageVol, remoteError])(
    'lays out $name as the .x does',
    (type) => {
      expect(type.spec).toBe(spec.spec(type.name));
    },
  );

  it('reads the error record as virNetMessageError and the header as virNetMessageHeader', () => {
    expect(remoteError.spec).toBe(spec.spec('virNetMessageError'));
    expect(messageHeader.spec).toBe(spec.spec(messageHeader.name));
    expect(spec.enumValues.get('VIR_NET_STREAM')).toBe(3);
  });

  it('speaks the keepalive program of virkeepaliveprotocol.x', () => {
    expect(spec.constants.get('KEEPALIVE_PROGRAM')).toBe(KEEPALIVE_PROGRAM);
    expect(spec.constants.get('KEEPALIVE_PROTOCOL_VERSION')).toBe(KEEPALIVE_PROTOCOL_VERSION);
    expect(spec.enumValues.get('KEEPALIVE_PROC_PING')).toBe(KeepaliveProcedure.Ping);
    expect(spec.enumValues.get('KEEPALIVE_PROC_PONG')).toBe(KeepaliveProcedure.Pong);
  });

  it('gives every procedure its own number', () => {
    const numbers = procedures.map(([, p]) => p.number);
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});
