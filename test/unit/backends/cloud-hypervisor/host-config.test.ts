// The host config: strict (unknown keys and relative paths refused, naming the key), small defaults.
import { describe, expect, it } from 'vitest';
import { parseHostConfig } from '../../../../controller/backends/cloud-hypervisor/host-config.js';

const MINIMAL = `
imageDir: /var/lib/banlieue/images
vmm: { binary: /usr/local/bin/cloud-hypervisor }
storageClasses: { fast: /srv/vm/fast/ }
networkClasses: { lan: br0 }
`;

describe('Cloud Hypervisor host config', () => {
  it('fills the defaults and normalises paths', () => {
    expect(parseHostConfig(MINIMAL, 'host.yaml', { hostName: 'kvm1' })).toEqual({
      hostName: 'kvm1',
      stateRoot: '/var/lib/banlieue/cloud-hypervisor',
      imageDir: '/var/lib/banlieue/images',
      vmm: { binary: '/usr/local/bin/cloud-hypervisor', requireKvm: true },
      storageClasses: { fast: '/srv/vm/fast' },
      networkClasses: { lan: 'br0' },
      capacity: { maxMemoryUsedPercent: 90, minStorageFreeGiB: 5 },
      powerOffGraceSeconds: 60,
      urlImages: { maxSizeMiB: 20480, allowHttp: false, allowWithoutChecksum: false },
    });
  });

  it('takes a Url image policy: a size cap, a mirror CA, and the lab opt-ins', () => {
    const text = `${MINIMAL}urlImages: { maxSizeMiB: 4096, caFile: /etc/banlieue/mirror-ca.pem, allowHttp: true, allowWithoutChecksum: true }\n`;
    expect(parseHostConfig(text, 'host.yaml', { hostName: 'kvm1' }).urlImages).toEqual({
      maxSizeMiB: 4096,
      caFile: '/etc/banlieue/mirror-ca.pem',
      allowHttp: true,
      allowWithoutChecksum: true,
    });
  });

  it.each([
    [`${MINIMAL}extra: 1\n`, /unknown key extra/],
    [MINIMAL.replace('vmm: {', 'vmm: { kernel: /k,'), /unknown key vmm\.kernel/],
    [MINIMAL.replace('/srv/vm/fast/', 'srv/fast'), /storageClasses\.fast "srv\/fast" is not an absolute path/],
    [MINIMAL.replace('br0', 'br0; reboot'), /networkClasses\.lan "br0; reboot" is not a Linux interface name/],
    [MINIMAL.replace('fast:', 'Fast_1:'), /storageClasses\.Fast_1: a class name is a DNS label/],
    [MINIMAL.replace('storageClasses: { fast: /srv/vm/fast/ }', ''), /storageClasses declares no class/],
    [`${MINIMAL}capacity: { maxMemoryUsedPercent: 150 }\n`, /capacity\.maxMemoryUsedPercent must be a number from 1 to 100/],
    [MINIMAL.replace('vmm: { binary: /usr/local/bin/cloud-hypervisor }', 'vmm: {}'), /vmm\.binary is required/],
    ['[1, 2]', /the document must be a mapping/],
    [`${MINIMAL}urlImages: { allowHttps: true }\n`, /unknown key urlImages\.allowHttps/],
    [`${MINIMAL}urlImages: { allowHttp: "yes" }\n`, /urlImages\.allowHttp must be true or false/],
    [`${MINIMAL}urlImages: { maxSizeMiB: 0 }\n`, /urlImages\.maxSizeMiB must be a number from 1 to/],
    [`${MINIMAL}urlImages: { caFile: ca.pem }\n`, /urlImages\.caFile "ca\.pem" is not an absolute path/],
  ])('refuses a config naming the key: %#', (text, message) => {
    expect(() => parseHostConfig(text, '/etc/banlieue/cloud-hypervisor.yaml', { hostName: 'kvm1' })).toThrow(message);
  });

  it('names the file in its errors', () => {
    expect(() => parseHostConfig('{', '/etc/banlieue/cloud-hypervisor.yaml')).toThrow(/^\/etc\/banlieue\/cloud-hypervisor\.yaml: not YAML/);
  });
});
