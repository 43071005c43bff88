import { type ApiObject, Chart, JsonPatch } from 'cdk8s';

/**
 * cdk8s stamps the chart namespace on every object, cluster-scoped ones
 * included (cdk8s-core #731); a namespace on a ClusterRole or CRD is wrong, so
 * drop it when the enclosing chart has one.
 */
export function clusterScoped<T extends ApiObject>(obj: T): T {
  if (Chart.of(obj).namespace) obj.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  return obj;
}
