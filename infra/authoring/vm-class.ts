// The VMClass construct: a reusable, backend-independent VM shape.
import type { Construct } from 'constructs';
import { VMClassKind, type VMClassSpec } from '../api/banlieue.io/v1alpha1/vm-class.js';
import { BanlieueApiObject, type BanlieueResourceProps } from './banlieue-api-object.js';
import { referenceByName, type KindReference } from './kind-reference.js';

/** A VMClass: a `VMClass` construct of this app, or `VMClass.fromName(name)`. */
export type VMClassReference = KindReference<'VMClass'>;

/** Properties of a `VMClass`: its spec fields, with the types of the API schema. */
export interface VMClassProps extends BanlieueResourceProps, VMClassSpec {
  /** CPUs, memory and disks; the first disk is the OS disk, backed by the image. */
  readonly hardware: VMClassSpec['hardware'];
  /** Network interfaces, in order; each names a network class a Provider offers. */
  readonly network: VMClassSpec['network'];
  /**
   * Boot firmware.
   * @default 'bios'
   */
  readonly firmware?: NonNullable<VMClassSpec['firmware']>;
  /**
   * Features every failure domain must offer for this class.
   * @default - none
   */
  readonly features?: NonNullable<VMClassSpec['features']>;
}

/** A VMClass: the shape of VirtualMachines (CPU, memory, disks, interfaces, firmware), cluster-scoped. */
export class VMClass extends BanlieueApiObject<VMClassSpec> implements VMClassReference {
  /** A VMClass this app does not create. */
  static fromName(name: string): VMClassReference {
    return referenceByName<'VMClass'>(VMClassKind, name);
  }

  declare readonly kind: 'VMClass';

  constructor(scope: Construct, id: string, props: VMClassProps) {
    const { metadata, ...spec } = props;
    super(scope, id, VMClassKind, { metadata, spec });
  }
}
