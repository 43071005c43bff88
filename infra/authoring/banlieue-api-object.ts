// Typed authoring of banlieue objects in a user's cdk8s app. Props use the
// wire names (no toJson_ renaming), and every object is checked against the
// API schema when the app synthesises.
import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct } from 'constructs';
import { apiVersionOf, type KindDefinition } from '../api/kind.js';
import type { Static } from '../api/schema.js';
import { BanlieueValidator } from '../api/validator.js';

export interface BanlieueObjectProps<Spec> {
  /** Object metadata; name defaults to a cdk8s-generated name, so set it. */
  readonly metadata?: ApiObjectMetadata;
  /** The spec, exactly as the API server stores it. */
  readonly spec: Spec;
}

let sharedValidator: BanlieueValidator | undefined;
function validator(): BanlieueValidator {
  // Compiling every schema costs tens of milliseconds; do it once, on first use.
  sharedValidator ??= new BanlieueValidator();
  return sharedValidator;
}

export abstract class BanlieueApiObject<Spec> extends ApiObject {
  protected constructor(scope: Construct, id: string, def: KindDefinition, props: BanlieueObjectProps<Spec>) {
    super(scope, id, {
      apiVersion: apiVersionOf(def),
      kind: def.kind,
      metadata: props.metadata ?? {},
      spec: props.spec,
    });
    if (def.scope === 'Cluster' && props.metadata?.namespace) {
      throw new Error(`${def.kind} ${props.metadata.name ?? id}: metadata.namespace must not be set on a cluster-scoped kind`);
    }
    this.node.addValidation({
      validate: () =>
        validator()
          .validate(this.toJson())
          .map((issue) => `${def.kind} ${this.name}: ${issue.field}: ${issue.message}`),
    });
  }
}

/** The construct class of one kind: `new VirtualMachine(scope, id, props)`. */
export type BanlieueConstructClass<Spec> = new (scope: Construct, id: string, props: BanlieueObjectProps<Spec>) => BanlieueApiObject<Spec>;

export function defineConstruct<D extends KindDefinition>(def: D): BanlieueConstructClass<Static<D['spec']>> {
  type Spec = Static<D['spec']>;
  const construct = class extends BanlieueApiObject<Spec> {
    constructor(scope: Construct, id: string, props: BanlieueObjectProps<Spec>) {
      super(scope, id, def, props);
    }
  };
  Object.defineProperty(construct, 'name', { value: def.kind });
  return construct;
}
