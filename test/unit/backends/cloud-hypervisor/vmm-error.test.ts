// How the VMM's error answers become typed errors: the body forms of each release, and
// the kind and code per status and chain (chains as v53.0 sends them, read off the binary).
import { describe, expect, it } from 'vitest';
import { errorChain, VmmApiError } from '../../../../controller/backends/cloud-hypervisor/client/vmm-error.js';

describe('VMM error bodies', () => {
  it.each([
    [
      'a v53 JSON error chain',
      '["Error from API","The VM could not boot","VM config is missing"]',
      ['Error from API', 'The VM could not boot', 'VM config is missing'],
    ],
    [
      "micro_http's own error object",
      '{ "error": "Invalid HTTP Method: Unsupported HTTP method.\nAll previous unanswered requests will be dropped." }',
      ['Invalid HTTP Method: Unsupported HTTP method.\nAll previous unanswered requests will be dropped.'],
    ],
    ["an older release's plain text", 'VM is not booted\n', ['VM is not booted']],
    ['no body', '', []],
    ['JSON that is not a chain', '{"x":1}', ['{"x":1}']],
  ])('reads %s', (_what, body, chain) => {
    expect(errorChain(body)).toEqual(chain);
  });
});

describe('VMM errors', () => {
  it.each([
    [404, ['Error from API', 'The VM info is not available', 'VM is not created'], 'NotFound', 'VmNotCreated'],
    [404, ['Error from API', 'The VM could not boot', 'VM config is missing'], 'NotFound', 'VmNotCreated'],
    [404, ['Not Found'], 'NotFound', 'VmmError'],
    [500, ['Error from API', 'The VM could not be paused', 'VM is not running'], 'Rejected', 'VmNotRunning'],
    [500, ['Error from API', 'The VM could not be created', 'VM is already created'], 'Rejected', 'VmAlreadyCreated'],
    [
      500,
      [
        'Error from API',
        'The VM could not resume',
        'Cannot resume VM',
        'Failed to resume migratable component',
        'Invalid transition: InvalidStateTransition(Running, Running)',
      ],
      'Rejected',
      'InvalidStateTransition',
    ],
    [500, ['Error from API', 'The VM could not boot', 'Cannot open kernel file', 'No such file or directory (os error 2)'], 'Rejected', 'VmmError'],
    [400, ['Failed to deserialize JSON', 'missing field `max_vcpus` at line 1 column 24'], 'Rejected', 'BadRequest'],
    [405, ['The VM is not booted'], 'Rejected', 'VmmError'],
    [409, ['Identifier os is not unique'], 'Rejected', 'VmmError'],
    [429, ['Too Many Requests'], 'Unreachable', 'ResizePending'],
    [502, [], 'Unreachable', 'VmmError'],
  ])('HTTP %i %j is %s with code %s', (status, chain, kind, code) => {
    const error = new VmmApiError('vm.x', status, chain);
    expect(error).toMatchObject({ name: 'VmmApiError', kind, code, status, chain });
    expect(error.message).toBe(`vm.x: HTTP ${status}${chain.length ? `: ${chain.join(': ')}` : ''}`);
  });
});
