// User-data reaches the guest as the bytes it was given: gzip user-data is
// neither decoded as UTF-8 nor re-encoded, on every backend's way to the guest
// (vSphere guestinfo, the NoCloud seed of libvirt, Cloud Hypervisor and
// Proxmox).
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { toSeedFiles, toSeedImage } from '../../../controller/backends/cloud-init/nocloud-seed.js';
import { toNoCloudIso } from '../../../controller/backends/cloud-init/nocloud-iso.js';
import { isGzip, userDataText } from '../../../controller/backends/user-data-bytes.js';
import { seedFiles } from '../../../controller/backends/proxmox/machine/seed.js';
import { guestInfoExtraConfig } from '../../../controller/backends/vsphere/machine/guest-info.js';

const UUID = '74e4d702-bafd-5e07-8195-ab7a57a18b2a';
const CLOUD_CONFIG = '#cloud-config\nhostname: web-1\nruncmd: [echo, "${VM_NAME}"]\n';
// Compressed bytes are not UTF-8: a decode would turn them into U+FFFD.
const GZIP = gzipSync(Buffer.from(CLOUD_CONFIG, 'utf8'));
const NOT_UTF8 = Buffer.of(0x23, 0x21, 0xff, 0xfe, 0x00, 0x80);

describe('user-data bytes', () => {
  it.each([
    ['gzip bytes', GZIP, true],
    ['text bytes', Buffer.from(CLOUD_CONFIG), false],
    ['a string', CLOUD_CONFIG, false],
    ['one byte', Buffer.of(0x1f), false],
  ])('tells gzip from the rest: %s', (_, data, gzip) => {
    expect(isGzip(data)).toBe(gzip);
  });

  it.each([
    ['gzip bytes', GZIP, undefined],
    ['bytes that are not UTF-8', NOT_UTF8, undefined],
    ['UTF-8 text', Buffer.from('#cloud-config\n# é ✓\n'), '#cloud-config\n# é ✓\n'],
    ['UTF-8 text with a byte order mark, kept', Buffer.from('\uFEFF#!/bin/sh\n'), '\uFEFF#!/bin/sh\n'],
  ])('reads only text as text: %s', (_, data, text) => {
    expect(userDataText(data)).toBe(text);
  });
});

describe('gzip user-data on its way to the guest', () => {
  const nics = [{ name: 'eth0', mac: '02:aa:bb:cc:dd:ee', ipam: undefined }];

  it('writes vSphere guestinfo as gzip+base64 of the very bytes, so cloud-init gunzips them', () => {
    const config = guestInfoExtraConfig({ hostname: 'web-1', instanceId: UUID, providerID: `vsphere://${UUID}`, nics: [], userData: GZIP });

    expect(config['guestinfo.userdata.encoding']).toBe('gzip+base64');
    expect(Buffer.from(config['guestinfo.userdata'] ?? '', 'base64')).toEqual(GZIP);
    expect(gunzipSync(Buffer.from(config['guestinfo.userdata'] ?? '', 'base64')).toString('utf8')).toBe(CLOUD_CONFIG);
  });

  it('keeps base64 for user-data that is not compressed, bytes or text', () => {
    const config = (userData: string | Buffer): Record<string, string> =>
      guestInfoExtraConfig({ hostname: 'web-1', instanceId: UUID, providerID: `vsphere://${UUID}`, nics: [], userData });

    expect(config(NOT_UTF8)['guestinfo.userdata.encoding']).toBe('base64');
    expect(Buffer.from(config(NOT_UTF8)['guestinfo.userdata'] ?? '', 'base64')).toEqual(NOT_UTF8);
    expect(config(CLOUD_CONFIG)['guestinfo.userdata.encoding']).toBe('base64');
  });

  it('puts the gzip bytes, unchanged, in the NoCloud seed file (libvirt, Cloud Hypervisor)', () => {
    const input = { uuid: UUID, hostname: 'web-1', providerID: `libvirt://${UUID}`, userData: GZIP, nics, nicsField: 'spec.network' };

    expect(toSeedFiles(input).userData).toEqual(GZIP);
    expect(toSeedImage(input).includes(GZIP)).toBe(true);
  });

  it('puts the gzip bytes, unchanged, in the Proxmox seed ISO', () => {
    const files = seedFiles({ hostname: 'web-1', uuid: UUID, providerID: `proxmox://${UUID}`, spec: { nics: [] }, userData: GZIP });

    expect(files.userData).toEqual(GZIP);
    expect(toNoCloudIso(files).includes(GZIP)).toBe(true);
  });
});
