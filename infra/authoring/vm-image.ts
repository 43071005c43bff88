// The VMImage construct: an OS image, with its source on each backend.
import type { Construct } from 'constructs';
import { VMImageKind, type VMImageSpec } from '../api/banlieue.io/v1alpha1/vm-image.js';
import { BanlieueApiObject, type BanlieueResourceProps } from './banlieue-api-object.js';
import { referenceByName, type KindReference } from './kind-reference.js';

/** A VMImage: a `VMImage` construct of this app, or `VMImage.fromName(name)`. */
export type VMImageReference = KindReference<'VMImage'>;

/** Properties of a `VMImage`: its spec fields, with the types of the API schema. */
export interface VMImageProps extends BanlieueResourceProps, VMImageSpec {
  /** Operating system family. */
  readonly osFamily: VMImageSpec['osFamily'];
  /** Distribution, e.g. ubuntu. */
  readonly osDistribution: string;
  /** Distribution version, e.g. 24.04. */
  readonly osVersion: string;
  /** CPU architecture (the API server defaults an absent one to amd64; the schema's type asks for it). */
  readonly architecture: VMImageSpec['architecture'];
  /**
   * How the guest consumes user-data.
   * @default 'cloud-init'
   */
  readonly guestAgent?: NonNullable<VMImageSpec['guestAgent']>;
  /** Where the image comes from: one source per backend. */
  readonly sources: VMImageSpec['sources'];
}

/** A VMImage: an operating-system image and the source to use on each backend, cluster-scoped. */
export class VMImage extends BanlieueApiObject<VMImageSpec> implements VMImageReference {
  /** A VMImage this app does not create. */
  static fromName(name: string): VMImageReference {
    return referenceByName<'VMImage'>(VMImageKind, name);
  }

  declare readonly kind: 'VMImage';

  constructor(scope: Construct, id: string, props: VMImageProps) {
    const { metadata, ...spec } = props;
    super(scope, id, VMImageKind, { metadata, spec });
  }
}
