// *MachineTemplates (one reconciler per backend's template kind): publish in
// status what a machine of the template offers a Node. Reads the cache,
// writes only status, talks to no backend.
import type { InfraMachineContractSpec, MachineTemplateStatus } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { KubeObject } from '../../../infra/api/kind.js';
import type { BackendDescriptor } from '../../backends/descriptor.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, type ReconcileResult } from '../../runtime/errors.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import { applyStatus } from '../../runtime/status-writer.js';
import { decideTemplateStatus } from './decide.js';

/** Any *MachineTemplate: `spec.template.spec` is its backend's machine spec. */
export type MachineTemplate = KubeObject<{ template: { spec: InfraMachineContractSpec } }, MachineTemplateStatus>;

export class MachineTemplateReconciler implements Reconciler {
  readonly name: string;
  readonly kind: string;

  constructor(
    private readonly backend: BackendDescriptor,
    private readonly templates: Informer<MachineTemplate>,
    private readonly ssa: ServerSideApply,
  ) {
    this.kind = backend.api.machineTemplate.kind;
    this.name = this.kind.toLowerCase();
  }

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const template = this.templates.get(key);
    if (!template || template.metadata.deletionTimestamp) return done;
    // The CRD admitted spec.template.spec as this backend's machine spec.
    const status = decideTemplateStatus(this.backend.machineCapacity(template.spec.template.spec));
    if (await applyStatus(this.ssa, template, status)) log.info({ capacity: status.capacity }, 'Updated template capacity');
    return done;
  }
}
