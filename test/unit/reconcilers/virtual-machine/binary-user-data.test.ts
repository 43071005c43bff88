// A VirtualMachine's binary user-data (gzip, or any bytes that are not UTF-8)
// is no template: the rendered Secret holds it byte for byte, while text
// user-data is still rendered.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { renderUserDataSource, type UserDataVars } from '../../../../controller/reconcilers/virtual-machine/user-data.js';
import { toUserDataSecret } from '../../../../controller/reconcilers/virtual-machine/ownership.js';
import { aVm } from './fixtures.js';

const VARS: UserDataVars = {
  VM_NAME: 'web-1',
  NAMESPACE: 'team-a',
  FQDN: 'web-1',
  HOSTNAME: 'web-1',
  IP: '',
  PREFIX: '',
  GATEWAY: '',
  DNS: '',
  DOMAIN: '',
  PROVIDER_ID: '',
};

const GZIP = gzipSync(Buffer.from('#!/bin/sh\necho ${VM_NAME}\n'));
// A placeholder among bytes that are not UTF-8: left as it is, with them.
const BINARY = Buffer.concat([Buffer.from('${VM_NAME}'), Buffer.of(0xff, 0x00, 0xc3)]);

describe('VirtualMachine binary user-data', () => {
  it.each([
    ['gzip user-data', GZIP],
    ['bytes that are not UTF-8', BINARY],
  ])('passes %s on unrendered, byte for byte', (_, source) => {
    expect(renderUserDataSource(source, VARS)).toEqual(source);
  });

  it('renders user-data that is UTF-8 text', () => {
    expect(renderUserDataSource(Buffer.from('#!/bin/sh\necho ${VM_NAME} ✓\n'), VARS)).toBe('#!/bin/sh\necho web-1 ✓\n');
  });

  it('writes the very bytes into the rendered Secret', () => {
    const secret = toUserDataSecret(aVm({}), renderUserDataSource(GZIP, VARS));

    expect(Buffer.from(secret.data.value, 'base64')).toEqual(GZIP);
  });
});
