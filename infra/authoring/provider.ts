// The Provider construct: one backend instance (a vCenter, a Proxmox cluster,
// a libvirt or Cloud Hypervisor host) and what it offers.
import type { Construct } from 'constructs';
import { ProviderKind, type ProviderSpec } from '../api/banlieue.io/v1alpha1/provider.js';
import { BanlieueApiObject, type BanlieueResourceProps } from './banlieue-api-object.js';
import { referenceByName, type KindReference } from './kind-reference.js';

/** A Provider of the referring object's namespace: a `Provider` construct of this app, or `Provider.fromName(name)`. */
export type ProviderReference = KindReference<'Provider'>;

/**
 * Properties of a `Provider`: its spec fields, with the types of the API
 * schema, including the settings field of its backend (named like the backend).
 */
export interface ProviderProps extends BanlieueResourceProps, ProviderSpec {
  /** Which backend this Provider is, e.g. `{ name: 'libvirt' }`; picks the provider role that serves it. Immutable. */
  readonly providerClassRef: ProviderSpec['providerClassRef'];
  /** How to reach the backend: its endpoint, the Secret holding its credentials, the CA to trust. */
  readonly connection: ProviderSpec['connection'];
  /**
   * The storage and network classes (and features) this Provider offers, which VMClasses name.
   * @default - none: no VMClass with disks or interfaces fits it
   */
  readonly capabilities?: NonNullable<ProviderSpec['capabilities']>;
  /**
   * Backend objects beyond the published ones that machines on this Provider may name.
   * @default - only what its failure domains and classes publish
   */
  readonly allowedTargets?: NonNullable<ProviderSpec['allowedTargets']>;
  /**
   * Names to publish instead of the generated `<provider>-<datacenter>-<cluster>`.
   * @default - the generated names
   */
  readonly failureDomainNameOverrides?: NonNullable<ProviderSpec['failureDomainNameOverrides']>;
  /**
   * Stop reconciling this Provider and its machines.
   * @default false
   */
  readonly paused?: boolean;
}

/** A Provider: one backend instance that banlieue schedules VirtualMachines onto. */
export class Provider extends BanlieueApiObject<ProviderSpec> implements ProviderReference {
  /** A Provider this app does not create, in the namespace of the object referring to it. */
  static fromName(name: string): ProviderReference {
    return referenceByName<'Provider'>(ProviderKind, name);
  }

  declare readonly kind: 'Provider';

  constructor(scope: Construct, id: string, props: ProviderProps) {
    const { metadata, ...spec } = props;
    super(scope, id, ProviderKind, { metadata, spec });
  }
}
