// The authoring constructs as a user's cdk8s app meets them: one class per
// kind, usable as a type, references between objects given as constructs or
// by name, and what the app synthesises.
import { Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import {
  LibvirtMachineTemplate,
  Provider,
  VirtualMachine,
  VMClass,
  VMImage,
  type LibvirtMachineTemplateProps,
  type VirtualMachineProps,
  type VMClassReference,
} from '../../../infra/index.js';
import { testApp } from '../../support/chart-app.js';

interface Synthesised {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown>;
}

function chartIn(namespace?: string): Chart {
  return new Chart(testApp(), 'site', namespace === undefined ? {} : { namespace });
}

function objectsOf(chart: Chart): Synthesised[] {
  return Testing.synth(chart) as Synthesised[];
}

function small(chart: Chart): VMClass {
  return new VMClass(chart, 'small', {
    metadata: { name: 'small' },
    hardware: { cpus: 2, memoryMiB: 4096, disks: [{ name: 'os', sizeGiB: 20, storageClass: 'local' }] },
    network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
  });
}

describe('authoring constructs', () => {
  it('fills a VirtualMachine spec.classRef and spec.imageRef from the VMClass and VMImage constructs it is given', () => {
    // GIVEN a class and an image of the same app
    const chart = chartIn('vms');
    const cls = small(chart);
    const image = new VMImage(chart, 'debian', {
      metadata: { name: 'debian-12' },
      osFamily: 'linux',
      osDistribution: 'debian',
      osVersion: '12',
      architecture: 'amd64',
      sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: 'debian-12.qcow2' }],
    });
    // WHEN a VirtualMachine refers to them
    const props: VirtualMachineProps = { metadata: { name: 'web-1' }, vmClass: cls, image, desiredPowerState: 'PoweredOff' };
    const vm: VirtualMachine = new VirtualMachine(chart, 'web', props);
    // THEN its spec names them, as the API server stores it
    const synthesised = objectsOf(chart).find((o) => o.kind === 'VirtualMachine');
    expect(synthesised?.metadata).toEqual({ name: 'web-1', namespace: 'vms' });
    expect(synthesised?.spec).toEqual({ classRef: { name: 'small' }, imageRef: { name: 'debian-12' }, desiredPowerState: 'PoweredOff' });
    expect(vm.name).toBe('web-1');
  });

  it('refers to objects the app does not create by name', () => {
    const chart = chartIn('vms');
    const cls: VMClassReference = VMClass.fromName('large');
    new VirtualMachine(chart, 'db', { metadata: { name: 'db-1' }, vmClass: cls, image: VMImage.fromName('ubuntu-24-04') });
    expect(objectsOf(chart)[0]?.spec).toEqual({ classRef: { name: 'large' }, imageRef: { name: 'ubuntu-24-04' } });
    expect(Provider.fromName('vcenter-a')).toEqual({ apiVersion: 'banlieue.io/v1alpha1', kind: 'Provider', name: 'vcenter-a' });
  });

  it('refuses a reference of another kind, naming the prop and the value', () => {
    const chart = chartIn('vms');
    // A plain JavaScript caller has no type check to stop it.
    const wrong = VMImage.fromName('ubuntu') as unknown as VMClassReference;
    expect(() => new VirtualMachine(chart, 'web', { metadata: { name: 'web-1' }, vmClass: wrong, image: VMImage.fromName('ubuntu') })).toThrow(
      'VirtualMachine web-1: vmClass must be a VMClass, got VMImage ubuntu',
    );
  });

  it('leaves the Chart namespace off the cluster-scoped VMClass and VMImage, and refuses one set on them', () => {
    const chart = chartIn('vms');
    small(chart);
    expect(objectsOf(chart)[0]?.metadata).toEqual({ name: 'small' });
    expect(
      () =>
        new VMClass(chart, 'other', {
          metadata: { name: 'other', namespace: 'vms' },
          hardware: { cpus: 1, memoryMiB: 512, disks: [{ name: 'os', sizeGiB: 1, storageClass: 'local' }] },
          network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
        }),
    ).toThrow('VMClass other: metadata.namespace must not be set on a cluster-scoped kind');
  });

  it('fails synthesis of a Provider whose spec the API schema refuses, naming the field', () => {
    const app = testApp();
    const chart = new Chart(app, 'site', { namespace: 'vms' });
    new Provider(chart, 'host', {
      metadata: { name: 'host-a' },
      providerClassRef: { name: 'libvirt' },
      connection: { endpoint: 'qemu+tls://host-a.example.com/system' },
      failureDomainNameOverrides: [{ cluster: 'host-a', name: 'Not_A_Label' }],
    });
    expect(() => app.synth()).toThrow('Provider host-a: spec.failureDomainNameOverrides[0].name: must match pattern');
  });

  it('takes an infrastructure kind spec as the API server stores it', () => {
    const chart = chartIn('clusters');
    const props: LibvirtMachineTemplateProps = {
      metadata: { name: 'workers' },
      spec: {
        template: {
          spec: {
            pool: 'default',
            bootSource: { kind: 'backingVolume', volume: 'debian-12.qcow2' },
            vcpus: 2,
            memoryMiB: 2048,
            disks: [{ name: 'os', sizeGiB: 20 }],
          },
        },
      },
    };
    const template: LibvirtMachineTemplate = new LibvirtMachineTemplate(chart, 'workers', props);
    expect(template.kind).toBe('LibvirtMachineTemplate');
    expect(objectsOf(chart)[0]?.spec).toEqual(props.spec);
  });
});
