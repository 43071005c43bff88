// VMImage conditions, decided purely (upstream §1.5, ADR-0015): each provider
// role applies only its own status.perProvider row; the controller alone
// summarises them as Ready and ImageReady. Unchanged rows give deep-equal
// conditions, so an idle reconcile writes nothing.
import type { Condition } from '../../../infra/api/meta.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import type { PerProviderImageStatus, VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { compareText } from '../../scheduler/compare-text.js';

/** Not-ready Providers a condition message names before summarising the rest. */
export const MAX_LISTED_PROVIDERS = 10;

type Summary = Pick<ConditionInput, 'status' | 'reason' | 'message'>;

/** The image's conditions with Ready and ImageReady set from status.perProvider; other types untouched. */
export function decideVMImageConditions(image: VMImage, now: Date): Condition[] {
  const summary = summarise(image.status?.perProvider ?? []);
  const generation = image.metadata.generation;
  const inputs = [ConditionType.Ready, ConditionType.ImageReady].map((type): ConditionInput => ({
    type,
    ...summary,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  }));
  return setConditions(image.status?.conditions, inputs, now);
}

/** Ready iff there is at least one row and every row is ready. */
function summarise(rows: readonly PerProviderImageStatus[]): Summary {
  if (rows.length === 0) {
    return { status: 'False', reason: Reason.NoProviderRows, message: 'No Provider has reported on this image yet' };
  }
  // Sorted so the message does not depend on row order.
  const notReady = rows
    .filter((row) => !row.ready)
    .map(describe)
    .sort(compareText);
  if (notReady.length === 0) {
    return { status: 'True', reason: Reason.Reconciled, message: `Image ready on ${plural(rows.length, 'Provider')}` };
  }
  const shown = notReady.slice(0, MAX_LISTED_PROVIDERS).join(', ');
  const more = notReady.length > MAX_LISTED_PROVIDERS ? ` and ${notReady.length - MAX_LISTED_PROVIDERS} more` : '';
  return {
    status: 'False',
    reason: Reason.ImageNotReadyOnProvider,
    message: `Image not ready on ${notReady.length} of ${plural(rows.length, 'Provider')}: ${shown}${more}`,
  };
}

function describe(row: PerProviderImageStatus): string {
  return `${row.providerNamespace}/${row.providerName}: ${row.reason ?? 'no reason reported'}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
