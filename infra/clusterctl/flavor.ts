// What a backend's API entry says of its cluster template: the clusterctl
// flavor, and the spec of its machine template read from clusterctl variables
// (the template's variables are the ones that spec reads, in that order).
import type { VariableResolver } from './template-variables.js';

/** What a cluster template's machine template asks of one machine. */
export interface MachineShape {
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly osDiskGiB: number;
}

export interface ClusterTemplateFlavor<Spec extends object = object> {
  /**
   * clusterctl flavor name; '' is the default flavor (`cluster-template.yaml`),
   * whose backend the `clusterclass` flavor's ClusterClass is built on too.
   */
  readonly flavor: string;
  /** The machine template's `spec.template.spec` for machines of `shape`, each backend-specific value read through `v`. */
  machineSpec(shape: MachineShape, v: VariableResolver): Spec;
}
