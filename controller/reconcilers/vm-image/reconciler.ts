// VMImage: aggregate Ready from the per-provider rows the providers write.
// Writes only the conditions it owns; the rows stay the providers'.
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { done, type ReconcileResult } from '../../runtime/errors.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import { applyStatus } from '../../runtime/status-writer.js';
import type { Clock } from '../../runtime/clock.js';
import { decideVMImageConditions } from './decide.js';

export class VMImageReconciler implements Reconciler {
  readonly name = 'vmimage';
  readonly kind = 'VMImage';

  constructor(
    private readonly images: Informer<VMImage>,
    private readonly ssa: ServerSideApply,
    private readonly clock: Clock,
  ) {}

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const image = this.images.get(key);
    if (!image) return done;
    const conditions = decideVMImageConditions(image, this.clock.now());
    const status = { conditions, ...(image.metadata.generation !== undefined ? { observedGeneration: image.metadata.generation } : {}) };
    if (await applyStatus(this.ssa, image, status)) log.info('Updated image readiness');
    return done;
  }
}
