// Typed authoring of banlieue objects in a user's cdk8s app. Props use the
// wire names (no toJson_ renaming), and every object is checked against the
// API schema when the app synthesises.
import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct } from 'constructs';
import { apiVersionOf, type KindDefinition } from '../api/kind.js';
import type { Static } from '../api/schema.js';
import { BanlieueValidator } from '../api/validator.js';
import { clusterScoped } from '../install/cluster-scoped.js';

/** What every banlieue construct takes besides its spec. */
export interface BanlieueResourceProps {
  /**
   * Object metadata. Set the name: the objects refer to each other by it.
   * A cluster-scoped kind (VMClass, VMImage) takes no namespace, and drops the one its Chart would stamp on it.
   * @default - name: one cdk8s makes from the construct path (with a hash); namespace: the Chart's
   */
  readonly metadata?: ApiObjectMetadata | undefined;
}

/** The props of a kind's construct that takes its spec as the API server stores it. */
export interface BanlieueObjectProps<Spec> extends BanlieueResourceProps {
  /** The spec, exactly as the API server stores it (wire names). */
  readonly spec: Spec;
}

let sharedValidator: BanlieueValidator | undefined;
function validator(): BanlieueValidator {
  // Compiling every schema costs tens of milliseconds; do it once, on first use.
  sharedValidator ??= new BanlieueValidator();
  return sharedValidator;
}

/** The base of every banlieue construct: one object of `def`'s kind, validated against its schema at synth. */
export abstract class BanlieueApiObject<Spec> extends ApiObject {
  protected constructor(scope: Construct, id: string, def: KindDefinition, props: BanlieueObjectProps<Spec>) {
    super(scope, id, {
      apiVersion: apiVersionOf(def),
      kind: def.kind,
      metadata: props.metadata ?? {},
      spec: props.spec,
    });
    if (def.scope === 'Cluster') {
      if (props.metadata?.namespace) {
        throw new Error(`${def.kind} ${props.metadata.name ?? id}: metadata.namespace must not be set on a cluster-scoped kind`);
      }
      clusterScoped(this);
    }
    this.node.addValidation({
      validate: () =>
        validator()
          .validate(this.toJson())
          .map((issue) => `${def.kind} ${this.name}: ${issue.field}: ${issue.message}`),
    });
  }
}

/** The construct class of one kind whose props are its spec as stored: `new VSphereMachine(scope, id, { metadata, spec })`. */
export type BanlieueConstructClass<Spec> = new (scope: Construct, id: string, props: BanlieueObjectProps<Spec>) => BanlieueApiObject<Spec>;

/** The props of `def`'s construct made by `defineConstruct`. */
export type PropsOf<D extends KindDefinition> = BanlieueObjectProps<Static<D['spec']>>;

/**
 * The construct class of a kind that takes its spec as stored: the base of the
 * infrastructure kinds' named classes, and what code generic over backends
 * (which holds only a KindDefinition) instantiates.
 */
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
