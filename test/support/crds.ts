import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlane } from './control-plane.js';

/** Apply dist/'s CRD chart with kubectl and wait until every CRD is Established. */
export async function applyCrdsFromDist(cp: ControlPlane): Promise<void> {
  const file = readdirSync('dist').find((f) => f.endsWith('-banlieue-crds.k8s.yaml'));
  if (!file) throw new Error('dist/ has no CRD chart: run make synth');
  await cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-test', '-f', join('dist', file)]);
  await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '-l', 'app.kubernetes.io/part-of=banlieue']);
}
