import { describe, expect, it } from 'vitest';
import { defaultDomainName } from '../../../../controller/backends/libvirt/domain-name.js';
import { LIBVIRT_MAX_DOMAIN_NAME_LENGTH } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';

describe('defaultDomainName', () => {
  it('is <namespace>-<name> while that fits', () => {
    expect(defaultDomainName('team-a', 'web-1')).toBe('team-a-web-1');
    const fits = 'x'.repeat(LIBVIRT_MAX_DOMAIN_NAME_LENGTH - 'ns-'.length);
    expect(defaultDomainName('ns', fits)).toBe(`ns-${fits}`);
  });

  it('cuts the longest Kubernetes names to the limit, ended by a hash of the whole', () => {
    const namespace = 'n'.repeat(63);
    const name = `m-${'x'.repeat(251)}`;
    const domain = defaultDomainName(namespace, name);
    expect(domain).toHaveLength(LIBVIRT_MAX_DOMAIN_NAME_LENGTH);
    expect(domain).toMatch(new RegExp(`^${namespace}-m-x+-[0-9a-f]{8}$`));
    expect(defaultDomainName(namespace, name)).toBe(domain);
  });

  it('gives two names cut alike two domain names', () => {
    const stem = 'x'.repeat(LIBVIRT_MAX_DOMAIN_NAME_LENGTH);
    expect(defaultDomainName('ns', `${stem}-a`)).not.toBe(defaultDomainName('ns', `${stem}-b`));
  });
});
