// The cluster template flavors, derived from the backend list: one per backend
// whose API entry has one (its `clusterctl`), checked unique, then `clusterclass`
// on the default flavor's backend; and the release assets' names.
import type { BackendApi } from '../api/backend-api.js';
import { BACKEND_APIS } from '../api/backends.js';
import type { ClusterTemplateFlavor } from './flavor.js';

/** A backend with a cluster template: its kinds and its flavor. */
export interface FlavoredBackend {
  readonly api: BackendApi;
  readonly clusterctl: ClusterTemplateFlavor;
}

/** The flavor whose Cluster is built from a ClusterClass (on the default flavor's backend) that it ships too. */
export const CLUSTERCLASS_FLAVOR = 'clusterclass';

/** `flavored`, once each flavor name is known to be unique and not `clusterclass`, and the default ('') a built backend's. */
function checkedFlavors(flavored: readonly FlavoredBackend[]): readonly FlavoredBackend[] {
  const flavors = flavored.map((b) => b.clusterctl.flavor);
  const repeated = flavors.filter((f, i) => flavors.indexOf(f) !== i || f === CLUSTERCLASS_FLAVOR);
  if (repeated.length > 0) throw new Error(`cluster template flavors repeat or take a reserved name: ${repeated.map((f) => `"${f}"`).join(', ')}`);
  if (!flavored.some((b) => b.clusterctl.flavor === '' && b.api.providerRoleBuilt)) {
    throw new Error("no backend whose provider role is built has the default cluster template flavor ('')");
  }
  return flavored;
}

// The backends with a flavor, in backend order. No providerRefs or
// providerSelector: each InfraCluster aggregates every Provider of its backend
// in the namespace (edit the generated file to narrow).
const FLAVORED: readonly FlavoredBackend[] = checkedFlavors(BACKEND_APIS.flatMap((api) => (api.clusterctl ? [{ api, clusterctl: api.clusterctl }] : [])));

/**
 * The flavors a release ships, in release order: those of the backends whose
 * provider role this version has (a template for machines nothing would run is
 * not shipped), then `clusterclass`.
 */
export const FLAVORS: readonly string[] = [...FLAVORED.filter((b) => b.api.providerRoleBuilt).map((b) => b.clusterctl.flavor), CLUSTERCLASS_FLAVOR];

/** Every flavor a template can be rendered for, shipped or not (a backend whose provider role is not built yet): what tests check. */
export const RENDERABLE_FLAVORS: readonly string[] = [...FLAVORED.map((b) => b.clusterctl.flavor), CLUSTERCLASS_FLAVOR];

/** The release asset of a flavor, as clusterctl names it. */
export function templateFileName(flavor: string): string {
  return flavor === '' ? 'cluster-template.yaml' : `cluster-template-${flavor}.yaml`;
}

/** The backend of a renderable flavor other than `clusterclass`; throws naming the shipped flavors. */
export function backendOf(flavor: string): FlavoredBackend {
  const backend = FLAVORED.find((b) => b.clusterctl.flavor === flavor);
  if (!backend) throw new Error(`cluster template flavor "${flavor}" is not one of: ${FLAVORS.map((f) => f || '(default)').join(', ')}`);
  return backend;
}

/** The backend of the default flavor, which the `clusterclass` flavor's ClusterClass is built on too. */
export const CLUSTER_CLASS_BACKEND = backendOf('');

/** The backend whose machine template and InfraCluster a flavor's Cluster uses (the `clusterclass` flavor: its class's). */
export function flavorBackend(flavor: string): BackendApi {
  return flavor === CLUSTERCLASS_FLAVOR ? CLUSTER_CLASS_BACKEND.api : backendOf(flavor).api;
}

/**
 * The ClusterClass the `clusterclass` flavor's Cluster names. clusterctl finds a
 * class by name in the release (`clusterclass-<name>.yaml`) and adds it to the
 * generation unless the management cluster has it already, so its name is fixed.
 */
export const CLUSTER_CLASS_NAME = `banlieue-${CLUSTER_CLASS_BACKEND.api.name}`;

/** The release asset holding the ClusterClass `name`, as clusterctl looks it up. */
export const clusterClassFileName = (name: string): string => `clusterclass-${name}.yaml`;
