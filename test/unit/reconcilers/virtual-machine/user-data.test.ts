import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderUserData, userDataVars, type UserDataVars } from '../../../../controller/reconcilers/virtual-machine/user-data.js';
import { providerIdFor } from '../../../../controller/reconcilers/machine-identity.js';
import { aClass, aStaticClass, aVm, VM_UID } from './fixtures.js';

const VARS: UserDataVars = {
  VM_NAME: 'web-1',
  NAMESPACE: 'team-a',
  FQDN: 'web-1.lab.example',
  HOSTNAME: 'web-1',
  IP: '10.0.0.10',
  PREFIX: '24',
  GATEWAY: '10.0.0.1',
  DNS: '10.0.0.53,10.0.1.53',
  DOMAIN: 'lab.example',
  PROVIDER_ID: 'vsphere://74e4d702-bafd-5e07-8195-ab7a57a18b2a',
};

describe('user-data rendering', () => {
  it.each([
    ['hostname: ${HOSTNAME}\nfqdn: ${FQDN}', 'hostname: web-1\nfqdn: web-1.lab.example'],
    ['${VM_NAME}/${NAMESPACE}', 'web-1/team-a'],
    ['addresses: [${IP}/${PREFIX}]\ngateway4: ${GATEWAY}', 'addresses: [10.0.0.10/24]\ngateway4: 10.0.0.1'],
    ['nameservers: {addresses: [${DNS}], search: [${DOMAIN}]}', 'nameservers: {addresses: [10.0.0.53,10.0.1.53], search: [lab.example]}'],
    ['--provider-id=${PROVIDER_ID}', '--provider-id=vsphere://74e4d702-bafd-5e07-8195-ab7a57a18b2a'],
    ['${IP}${IP}', '10.0.0.1010.0.0.10'],
  ])('replaces known placeholders in %j', (template, expected) => {
    expect(renderUserData(template, VARS)).toBe(expected);
  });

  it.each([['echo ${HOME} ${1} ${UNKNOWN_VAR}'], ['$VM_NAME and ${vm_name} and ${ VM_NAME } and ${VM_NAME'], ['${toString} ${constructor}']])(
    'leaves everything else untouched in %j',
    (template) => {
      expect(renderUserData(template, VARS)).toBe(template);
    },
  );

  it('renders a shell script with its own variables beside ours', () => {
    expect(renderUserData('hostnamectl set-hostname ${HOSTNAME} && echo "${HOME}"', VARS)).toBe('hostnamectl set-hostname web-1 && echo "${HOME}"');
  });
});

describe('user-data rendering in a cloud-config', () => {
  it.each([
    ['a mapping value', '#cloud-config\nhostname: ${HOSTNAME}', '#cloud-config\nhostname: "web-1"'],
    ['a sequence item before a comment', '#cloud-config\n- ${FQDN} # the name', '#cloud-config\n- "web-1.lab.example" # the name'],
    ['a flow sequence item', '#cloud-config\nsearch: [${DOMAIN}, other.example]', '#cloud-config\nsearch: ["lab.example", other.example]'],
    ['a mapping key', '#cloud-config\n${HOSTNAME}: ${IP}', '#cloud-config\n"web-1": "10.0.0.10"'],
    ['the providerID', '#cloud-config\nprovider-id: ${PROVIDER_ID}', '#cloud-config\nprovider-id: "vsphere://74e4d702-bafd-5e07-8195-ab7a57a18b2a"'],
  ])('writes a placeholder that is %s as a double-quoted string', (_where, template, expected) => {
    expect(renderUserData(template, VARS)).toBe(expected);
  });

  it.each([
    ['inside double quotes', '#cloud-config\nfqdn: "${FQDN}"'],
    ['inside single quotes', "#cloud-config\nfqdn: '${FQDN}'"],
    ['part of a longer scalar', '#cloud-config\nfqdn: ${HOSTNAME}.${DOMAIN}'],
    ['in a block scalar', '#cloud-config\nwrite_files:\n  - content: |\n      host: ${FQDN}'],
    ['in a comment', '#cloud-config\n# on ${FQDN}\na: 1'],
    ['PREFIX, a number', '#cloud-config\nprefix: ${PREFIX}'],
    ['DNS, a list spread into a flow sequence', '#cloud-config\nnameservers: [${DNS}]'],
    ['in a cloud-config that does not parse', '#cloud-config\naddresses: [${IP}'],
    ['in a shell script', '#!/bin/sh\nhost: ${FQDN}'],
  ])('substitutes a placeholder %s as it is', (_where, template) => {
    const bare = template.replace(/\$\{([A-Z_]+)\}/g, (_whole, name: keyof UserDataVars) => VARS[name]);
    expect(renderUserData(template, VARS)).toBe(bare);
  });

  it.each([['on'], ['null'], ['0755'], ['1e3'], ['yes']])('keeps a VM named %j a string in the YAML 1.1 cloud-init reads', (name) => {
    const rendered = renderUserData('#cloud-config\nhostname: ${HOSTNAME}\n', { ...VARS, HOSTNAME: name });
    expect(parse(rendered, { version: '1.1' })).toEqual({ hostname: name });
  });

  it('writes an unknown value standing alone as the empty string', () => {
    expect(parse(renderUserData('#cloud-config\ngateway: ${GATEWAY}\n', { ...VARS, GATEWAY: '' }))).toEqual({ gateway: '' });
  });
});

describe('user-data injection', () => {
  // Every place a placeholder can stand: whole values, quoted strings, a flow
  // collection, a block scalar, shell commands.
  const TEMPLATE = [
    '#cloud-config',
    'hostname: ${HOSTNAME}',
    'fqdn: ${FQDN}',
    'search: [${DOMAIN}, \'${DOMAIN}\', "${DOMAIN}"]',
    'write_files:',
    '  - path: /etc/banlieue',
    '    content: "${VM_NAME}.${DOMAIN}"',
    '  - path: /etc/motd',
    '    content: |',
    '      ${FQDN} (${IP}/${PREFIX})',
    'runcmd:',
    '  - echo ${FQDN} > /etc/fqdn',
    "  - [sh, -c, 'hostnamectl set-hostname ${HOSTNAME}']",
    '',
  ].join('\n');
  const KEYS = ['hostname', 'fqdn', 'search', 'write_files', 'runcmd'];

  const PAYLOADS: [string, string][] = [
    ['a newline and a key', 'lab.example\nruncmd: [reboot]'],
    ['a command substitution', '$(reboot)'],
    ['backticks', '`reboot`'],
    ['": "', 'lab.example: reboot'],
    ['"#"', 'lab.example #reboot'],
    ['a double quote and a newline', 'x"\nbootcmd: [reboot]\n#'],
    ['a single quote closing a flow scalar', "x', bootcmd: [reboot], y: '"],
    ['a flow indicator', 'x], bootcmd: [reboot'],
    ['a YAML document start', '\n---\nbootcmd: [reboot]'],
  ];

  /** The rendered cloud-config, parsed: it must parse, with exactly the template's keys and items. */
  function expectTemplateShape(rendered: string): void {
    const doc = parse(rendered, { version: '1.1' }) as Record<string, unknown[]>;
    expect(Object.keys(doc)).toEqual(KEYS);
    expect(doc.write_files).toHaveLength(2);
    expect(doc.runcmd).toHaveLength(2);
    expect(rendered).not.toContain('reboot');
  }

  it('renders the template with valid values as expected', () => {
    const doc = parse(renderUserData(TEMPLATE, VARS)) as Record<string, unknown>;
    expect(doc).toEqual({
      hostname: 'web-1',
      fqdn: 'web-1.lab.example',
      search: ['lab.example', 'lab.example', 'lab.example'],
      write_files: [
        { path: '/etc/banlieue', content: 'web-1.lab.example' },
        { path: '/etc/motd', content: 'web-1.lab.example (10.0.0.10/24)\n' },
      ],
      runcmd: ['echo web-1.lab.example > /etc/fqdn', ['sh', '-c', 'hostnamectl set-hostname web-1']],
    });
  });

  it.each(PAYLOADS)('adds no key for a static address domain with %s', (_what, domain) => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24, domain } }] });
    const vars = userDataVars(vm, aStaticClass(), 'vsphere');
    const rendered = renderUserData(TEMPLATE, vars);
    expectTemplateShape(rendered);
    expect(parse(rendered)).toMatchObject({ hostname: 'web-1', fqdn: '', search: ['', '', ''] });
  });

  it.each(PAYLOADS)('adds no key for a host name with %s', (_what, name) => {
    expectTemplateShape(renderUserData(TEMPLATE, { ...VARS, VM_NAME: name, HOSTNAME: name, FQDN: `${name}.lab.example` }));
  });

  it.each([
    ['VM_NAME', 'web-1\nbootcmd: [reboot]'],
    ['NAMESPACE', 'team-a $(reboot)'],
    ['IP', '10.0.0.10\nbootcmd: [reboot]'],
    ['IP', 'fe80::1%eth0'],
    ['GATEWAY', 'ten.0.0.1'],
    ['DNS', '10.0.0.53,$(reboot)'],
    ['DNS', '10.0.0.53,'],
    ['PREFIX', '24 # reboot'],
    ['PROVIDER_ID', 'vsphere://x\nbootcmd: [reboot]'],
  ] as const)('renders %s %j, which is outside its grammar, as the empty string', (name, value) => {
    expect(renderUserData(`a ${'${'}${name}} b`, { ...VARS, [name]: value })).toBe('a  b');
  });

  it.each([['2001:db8::5'], ['10.0.0.10']])('substitutes the IP address %s', (ip) => {
    expect(renderUserData('#cloud-config\nip: ${IP}\nraw: x${IP}', { ...VARS, IP: ip })).toBe(`#cloud-config\nip: "${ip}"\nraw: x${ip}`);
  });
});

describe('user-data variables', () => {
  it('takes addressing from the first network override, completed by its class interface', () => {
    const vm = aVm({
      networkOverrides: [
        { name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } },
        { name: 'eth1', static: { address: '172.16.0.10', prefix: 16, gateway: '172.16.0.1' } },
      ],
    });
    expect(userDataVars(vm, aStaticClass(), 'vsphere')).toEqual(VARS);
  });

  it('leaves addressing empty and FQDN the name for a DHCP VM', () => {
    expect(userDataVars(aVm(), aClass(), 'libvirt')).toEqual({
      VM_NAME: 'web-1',
      NAMESPACE: 'team-a',
      FQDN: 'web-1',
      HOSTNAME: 'web-1',
      IP: '',
      PREFIX: '',
      GATEWAY: '',
      DNS: '',
      DOMAIN: '',
      PROVIDER_ID: providerIdFor('libvirt', VM_UID),
    });
  });

  it('uses the override domain for FQDN over the class domain', () => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24, domain: 'vm.example' } }] });
    expect(userDataVars(vm, aStaticClass(), 'proxmox')).toMatchObject({ FQDN: 'web-1.vm.example', DOMAIN: 'vm.example' });
  });

  it('offers no providerID for an object without a uid', () => {
    expect(userDataVars(aVm({}, { uid: undefined }), aClass(), 'vsphere').PROVIDER_ID).toBe('');
  });
});
