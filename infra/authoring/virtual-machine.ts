// The VirtualMachine construct: one backend-agnostic VM, shaped by a VMClass and
// booted from a VMImage, which it refers to as constructs.
import type { Construct } from 'constructs';
import { VirtualMachineKind, type VirtualMachineSpec } from '../api/banlieue.io/v1alpha1/virtual-machine.js';
import { BanlieueApiObject, type BanlieueResourceProps } from './banlieue-api-object.js';
import { toLocalReference } from './kind-reference.js';
import type { VMClassReference } from './vm-class.js';
import type { VMImageReference } from './vm-image.js';

/**
 * Properties of a `VirtualMachine`: its spec fields, with the types of the API
 * schema, the class and image given as references instead of `classRef` and `imageRef`.
 */
export interface VirtualMachineProps extends BanlieueResourceProps, Omit<VirtualMachineSpec, 'classRef' | 'imageRef'> {
  /** The VMClass giving the VM its shape (spec.classRef): a `VMClass` of this app or `VMClass.fromName(name)`. Immutable. */
  readonly vmClass: VMClassReference;
  /** The VMImage to boot (spec.imageRef): a `VMImage` of this app or `VMImage.fromName(name)`. Immutable. */
  readonly image: VMImageReference;
  /**
   * Where the VM may run: Provider and failure-domain label selectors, anti-affinity and topology spread.
   * @default - any Provider of the VM's namespace, any failure domain
   */
  readonly placement?: NonNullable<VirtualMachineSpec['placement']>;
  /**
   * Power state the VM is driven to.
   * @default 'PoweredOn'
   */
  readonly desiredPowerState?: NonNullable<VirtualMachineSpec['desiredPowerState']>;
  /**
   * A time (RFC 3339) asking for one restart of the VM; a new value asks for another.
   * @default - no restart asked for
   */
  readonly restartRequestedAt?: string;
  /**
   * Cloud-init (or Ignition) user-data, from a key of a Secret or a ConfigMap of the VM's namespace.
   * @default - none
   */
  readonly userData?: NonNullable<VirtualMachineSpec['userData']>;
  /**
   * What to do when the place the VM runs is no longer possible.
   * @default 'manual'
   */
  readonly migrationPolicy?: NonNullable<VirtualMachineSpec['migrationPolicy']>;
  /**
   * What deleting the VirtualMachine does to its backend VM.
   * @default 'Delete'
   */
  readonly deletionPolicy?: NonNullable<VirtualMachineSpec['deletionPolicy']>;
  /**
   * Stop reconciling this VM.
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Static addresses of class interfaces, by interface name.
   * @default - the class's addressing
   */
  readonly networkOverrides?: NonNullable<VirtualMachineSpec['networkOverrides']>;
  /**
   * CPUs, memory or larger disks than the class gives, for this VM only.
   * @default - the class's hardware
   */
  readonly hardwareOverride?: NonNullable<VirtualMachineSpec['hardwareOverride']>;
  /**
   * Backend folder to create the VM in, on backends that have folders.
   * @default - the Provider's default
   */
  readonly folder?: string;
}

/** A VirtualMachine: banlieue schedules it onto a Provider and failure domain and creates its backend machine. */
export class VirtualMachine extends BanlieueApiObject<VirtualMachineSpec> {
  constructor(scope: Construct, id: string, props: VirtualMachineProps) {
    const { metadata, vmClass, image, ...fields } = props;
    const owner = `${VirtualMachineKind.kind} ${metadata?.name ?? id}`;
    super(scope, id, VirtualMachineKind, {
      metadata,
      spec: {
        classRef: toLocalReference(owner, 'vmClass', 'VMClass', vmClass),
        imageRef: toLocalReference(owner, 'image', 'VMImage', image),
        ...fields,
      },
    });
  }
}
