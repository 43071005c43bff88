// How `bootstrap operator --wait` judges a Deployment's rollout and a pod's reason, as kubectl rollout status does.
import { describe, expect, it } from 'vitest';
import { decideRollout, podReason, type DeploymentState, type PodState } from '../../../controller/cli/rollout-status.js';

const deployment = (generation: number, status: NonNullable<DeploymentState['status']>, replicas = 1): DeploymentState => ({
  metadata: { name: 'banlieue-controller', generation },
  spec: { replicas },
  status,
});
const progressing = (reason: string, message = ''): { type: string; status: string; reason: string; message: string } => ({
  type: 'Progressing',
  status: reason === 'ProgressDeadlineExceeded' ? 'False' : 'True',
  reason,
  message,
});

describe('Deployment rollout verdicts', () => {
  it.each<[string, DeploymentState, string, string]>([
    ['its controller has not seen the spec', deployment(2, { observedGeneration: 1 }), 'Waiting', 'spec update to be observed'],
    ['no status at all', { metadata: { name: 'banlieue-controller', generation: 1 } }, 'Waiting', 'spec update to be observed'],
    ['no replica is updated', deployment(1, { observedGeneration: 1, replicas: 1 }), 'Waiting', '0 out of 1 new replicas have been updated'],
    [
      'an old replica is still there',
      deployment(1, { observedGeneration: 1, replicas: 2, updatedReplicas: 1 }),
      'Waiting',
      '1 old replicas are pending termination',
    ],
    [
      'the updated replica is not available',
      deployment(1, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 0 }),
      'Waiting',
      '0 of 1 updated replicas are available',
    ],
    [
      'its pods cannot be created',
      deployment(1, {
        observedGeneration: 1,
        replicas: 0,
        conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'pods "x" is forbidden: exceeded quota' }],
      }),
      'Waiting',
      '0 out of 1 new replicas have been updated...; FailedCreate: pods "x" is forbidden: exceeded quota',
    ],
    [
      'the progress deadline passed',
      deployment(1, {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        conditions: [progressing('ProgressDeadlineExceeded', 'ReplicaSet "x" has timed out progressing.')],
      }),
      'Failed',
      'deployment "banlieue-controller" exceeded its progress deadline (ReplicaSet "x" has timed out progressing.)',
    ],
    [
      'every replica is updated and available',
      deployment(1, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1, conditions: [progressing('NewReplicaSetAvailable')] }),
      'RolledOut',
      'deployment "banlieue-controller" successfully rolled out',
    ],
    ['it is scaled to zero', deployment(1, { observedGeneration: 1 }, 0), 'RolledOut', 'successfully rolled out'],
  ])('when %s', (_when, d, kind, message) => {
    const verdict = decideRollout(d);
    expect(verdict.kind).toBe(kind);
    expect(verdict.message).toContain(message);
  });
});

describe('why a pod is not available', () => {
  const pod = (spec: NonNullable<PodState['spec']>, status: NonNullable<PodState['status']>): PodState => ({ metadata: { name: 'p' }, spec, status });
  it.each<[string, PodState, string | undefined]>([
    [
      'its image cannot be pulled',
      pod({ nodeName: 'n1' }, { containerStatuses: [{ name: 'manager', state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } }] }),
      'pod p: container manager ErrImagePull: not found',
    ],
    [
      'the scheduler found no node',
      pod({}, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' }] }),
      'pod p: Unschedulable: 0/3 nodes are available',
    ],
    ['no node has taken it', pod({}, { phase: 'Pending' }), 'pod p: Pending, not scheduled to any node'],
    ['it runs', pod({ nodeName: 'n1' }, { phase: 'Running', containerStatuses: [{ name: 'manager', state: {} }] }), undefined],
  ])('when %s', (_when, p, reason) => {
    expect(podReason(p)).toBe(reason);
  });
});
