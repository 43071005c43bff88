// libvirt URIs → transport, where to dial, and the URI the daemon opens.
import { describe, expect, it } from 'vitest';
import { remoteCommand } from '../../../../controller/backends/libvirt/client/ssh-transport.js';
import { parseLibvirtUri } from '../../../../controller/backends/libvirt/client/uri.js';

describe('libvirt URI', () => {
  it.each([
    ['qemu+tls://host.example/system', { transport: 'tls', host: 'host.example', port: 16514, daemonUri: 'qemu:///system' }],
    ['qemu://host.example:1234/system', { transport: 'tls', host: 'host.example', port: 1234, daemonUri: 'qemu:///system' }],
    ['qemu+tcp://10.0.0.1/system', { transport: 'tcp', host: '10.0.0.1', port: 16509, daemonUri: 'qemu:///system' }],
    [
      'qemu+ssh://admin@[fd00::1]:2222/system?keyfile=/k',
      { transport: 'ssh', host: 'fd00::1', port: 2222, user: 'admin', keyfile: '/k', daemonUri: 'qemu:///system' },
    ],
    ['qemu+unix:///system?socket=/run/x/sock', { transport: 'unix', host: '', socket: '/run/x/sock', daemonUri: 'qemu:///system' }],
    ['qemu:///system', { transport: 'unix', socket: '/var/run/libvirt/libvirt-sock', daemonUri: 'qemu:///system' }],
    ['test+tcp://127.0.0.1:16509/default', { driver: 'test', transport: 'tcp', daemonUri: 'test:///default' }],
    ['qemu+tls://h/system?no_verify=1&pkipath=/p&foo=bar', { daemonUri: 'qemu:///system?foo=bar' }],
    ['qemu+ssh://h/system?name=qemu:///session', { daemonUri: 'qemu:///session' }],
  ])('reads %s', (uri, expected) => {
    expect(parseLibvirtUri(uri)).toMatchObject(expected);
  });

  it.each([
    ['not a uri', /is not a URI/],
    ['qemu+libssh2://h/system', /transport "libssh2"/],
    ['qemu+tcp:///system', /needs a host/],
    ['qemu+unix://h/system', /names no host/],
    ['qemu+ssh://u:secret@h/system', /must not carry a password/],
    ['qemu+ssh://h/system?proxy=magic', /proxy "magic"/],
  ])('refuses %s', (uri, message) => {
    expect(() => parseLibvirtUri(uri)).toThrow(message);
  });

  it('never puts a password in its error', () => {
    expect(() => parseLibvirtUri('qemu+ssh://u:secret@h/system')).toThrow(expect.objectContaining({ message: expect.not.stringContaining('secret') }));
  });

  it.each([
    ['native', `virt-ssh-helper 'qemu:///system'`],
    ['netcat', `'nc' -U '/var/run/libvirt/libvirt-sock'`],
    [
      'auto',
      `sh -c 'if which virt-ssh-helper >/dev/null 2>&1; then virt-ssh-helper '\\''qemu:///system'\\''; else '\\''nc'\\'' -U '\\''/var/run/libvirt/libvirt-sock'\\''; fi'`,
    ],
  ])('runs the proxy=%s command on the far side of ssh', (proxy, command) => {
    expect(remoteCommand(parseLibvirtUri(`qemu+ssh://h/system?proxy=${proxy}`))).toBe(command);
  });
});
