import { describe, expect, it } from 'vitest';
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

  it.each([
    ['echo ${HOME} ${1} ${UNKNOWN_VAR}'],
    ['$VM_NAME and ${vm_name} and ${ VM_NAME } and ${VM_NAME'],
    ['${toString} ${constructor}'],
  ])('leaves everything else untouched in %j', (template) => {
    expect(renderUserData(template, VARS)).toBe(template);
  });

  it('renders a shell script with its own variables beside ours', () => {
    expect(renderUserData('hostnamectl set-hostname ${HOSTNAME} && echo "${HOME}"', VARS)).toBe(
      'hostnamectl set-hostname web-1 && echo "${HOME}"',
    );
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
