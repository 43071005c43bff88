// clusterctl's metadata.yaml: which banlieue release series implement which
// CAPI contract (clusterctl.cluster.x-k8s.io/v1alpha3, validated strictly by
// clusterctl >= 1.11).
export const CAPI_CONTRACT = 'v1beta2';

export interface ReleaseSeries {
  major: number;
  minor: number;
  contract: string;
}

export interface ClusterctlMetadata {
  apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3';
  kind: 'Metadata';
  releaseSeries: ReleaseSeries[];
}

/** A releaseSeries entry for every major.minor from 0.1 up to `version`, newest first. */
export function clusterctlMetadata(version: string): ClusterctlMetadata {
  const match = /^v?(\d+)\.(\d+)\.\d+/.exec(version);
  if (!match) throw new Error(`version "${version}" is not a semantic version`);
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const series: ReleaseSeries[] = [];
  for (let ma = major; ma >= 0; ma -= 1) {
    // Minors of earlier majors are not known here; a new major starts at .0.
    const lowest = ma === 0 ? 1 : 0;
    const highest = ma === major ? minor : lowest;
    for (let mi = highest; mi >= lowest; mi -= 1) series.push({ major: ma, minor: mi, contract: CAPI_CONTRACT });
  }
  return { apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3', kind: 'Metadata', releaseSeries: series };
}
