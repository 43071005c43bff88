import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { APP_NAME, CLUSTERCTL_PROVIDER, Label } from '../api/well-known.js';

/** Labels on every object of a component (controller, provider-vsphere, crds, ...). */
export function componentLabels(component: string): Record<string, string> {
  return { [Label.name]: APP_NAME, [Label.component]: component, [Label.partOf]: APP_NAME };
}

/**
 * Labels that grant: CAPI aggregates every ClusterRole labelled
 * cluster.x-k8s.io/aggregate-to-manager into its manager's role. An installed
 * object carries one only where the install renders it; `banlieue bootstrap
 * operator` removes one an older install (or anyone) left on an object of the
 * install, whichever field manager set it (seed 001): an apply drops only the
 * fields its own field manager applied before.
 */
export const GRANTING_LABELS: readonly string[] = [Label.capiAggregateToManager];

/** The subset that selects a component's pods; stable across upgrades. */
export function selectorLabels(component: string): Record<string, string> {
  return { [Label.name]: APP_NAME, [Label.component]: component };
}

/**
 * Labels every object under `scope` `cluster.x-k8s.io/provider: infrastructure-banlieue`,
 * as the clusterctl provider contract asks of a provider's components. clusterctl adds it
 * at `init`; an install from dist/ or `banlieue bootstrap operator` carries it too, so
 * clusterctl finds the same objects when it adopts or upgrades that install.
 */
export function labelProviderComponents(scope: Construct): void {
  for (const node of scope.node.findAll()) {
    if (node instanceof ApiObject) node.metadata.addLabel(Label.capiProvider, CLUSTERCTL_PROVIDER);
  }
}
