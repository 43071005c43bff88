import { describe, expect, it } from 'vitest';
import { Reason } from '../../../infra/api/conditions.js';
import { BackendError, BackendErrorKind } from '../../../controller/backends/backend-error.js';
import { describeBackendFailure } from '../../../controller/reconcilers/backend-failure.js';

describe('backend failure mapping', () => {
  it.each([
    [BackendErrorKind.Unreachable, Reason.ConnectFailed, 'backoff', false],
    [BackendErrorKind.Unauthorized, Reason.ConnectFailed, 'backoff', false],
    [BackendErrorKind.Rejected, Reason.ProvisionFailed, 'wait', false],
    [BackendErrorKind.NotFound, Reason.ProvisionFailed, 'wait', false],
    [BackendErrorKind.TaskFailed, Reason.ProvisionFailed, 'wait', true],
  ] as const)('maps a %s error to reason %s, retry %s, taskFailed %s', (kind, reason, retry, taskFailed) => {
    expect(describeBackendFailure(new BackendError(kind, 'CloneVM_Task: no such datastore'), Reason.ProvisionFailed)).toEqual({
      reason,
      message: 'CloneVM_Task: no such datastore',
      retry,
      taskFailed,
    });
  });

  it('shows the reason a refusal names instead of the reconciler’s own, still waiting for a fix', () => {
    const refusal = new BackendError(BackendErrorKind.NotFound, 'no template "db" (spec.template)', { reason: Reason.TemplateNotFound });
    expect(describeBackendFailure(refusal, Reason.ProvisionFailed)).toMatchObject({ reason: Reason.TemplateNotFound, retry: 'wait' });
  });

  it('never lets a connection problem or a foreign VM show another reason than its own', () => {
    const unreachable = new BackendError(BackendErrorKind.Unreachable, 'timeout', { reason: Reason.TemplateNotFound });
    const notOwned = new BackendError(BackendErrorKind.NotOwned, 'not this machine’s', { reason: Reason.TemplateNotFound });
    expect(describeBackendFailure(unreachable, Reason.ProvisionFailed).reason).toBe(Reason.ConnectFailed);
    expect(describeBackendFailure(notOwned, Reason.ProvisionFailed).reason).toBe(Reason.VMNotOwned);
  });

  it('retries anything that is not a BackendError with backoff, under the reconciler’s own reason', () => {
    expect(describeBackendFailure(new TypeError('boom'), Reason.InventoryFailed)).toEqual({
      reason: Reason.InventoryFailed,
      message: 'boom',
      retry: 'backoff',
      taskFailed: false,
    });
  });
});
