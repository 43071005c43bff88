// vitest global setup of the integration project: one real control plane with
// banlieue's CRDs from dist/, shared by the suites (each uses its own namespace).
import type { TestProject } from 'vitest/node';
import { buildTools, ControlPlane } from './control-plane.js';
import { applyCrdsFromDist } from './crds.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    kubectl: string;
    server: string;
    /** The API server's audit log (writes only): suites count banlieue's writes from it. */
    auditLogPath: string;
    toolVersions: Record<string, string>;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const tools = await buildTools();
  const cp = await ControlPlane.start(tools);
  try {
    await applyCrdsFromDist(cp);
  } catch (err) {
    await cp.stop();
    throw err;
  }
  project.provide('kubeconfig', cp.kubeconfigPath);
  project.provide('kubectl', tools.kubectl);
  project.provide('server', cp.server);
  project.provide('auditLogPath', cp.auditLogPath);
  project.provide('toolVersions', tools.versions);
  return async () => {
    await cp.stop();
  };
}
