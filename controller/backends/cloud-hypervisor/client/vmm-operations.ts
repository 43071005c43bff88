// Every VMM API operation the client calls, in one table: the client reads method and
// path from here, and the schema test checks each against the OpenAPI spec (that the
// path and method exist, and that `body` names the spec's request schema).

/** Where the VMM serves its API (the spec's `servers[0].url` path). */
export const VMM_API_ROOT = '/api/v1';

export interface VmmOperation {
  readonly method: 'GET' | 'PUT';
  /** Below VMM_API_ROOT, e.g. `/vm.create`. */
  readonly path: string;
  /** The spec's component schema of the JSON request body; none when the call has no body. */
  readonly body?: string;
}

export const VmmOperations = {
  ping: { method: 'GET', path: '/vmm.ping' },
  shutdownVmm: { method: 'PUT', path: '/vmm.shutdown' },
  createVm: { method: 'PUT', path: '/vm.create', body: 'VmConfig' },
  bootVm: { method: 'PUT', path: '/vm.boot' },
  vmInfo: { method: 'GET', path: '/vm.info' },
  pauseVm: { method: 'PUT', path: '/vm.pause' },
  resumeVm: { method: 'PUT', path: '/vm.resume' },
  powerButton: { method: 'PUT', path: '/vm.power-button' },
  shutdownVm: { method: 'PUT', path: '/vm.shutdown' },
  rebootVm: { method: 'PUT', path: '/vm.reboot' },
  deleteVm: { method: 'PUT', path: '/vm.delete' },
  resizeVm: { method: 'PUT', path: '/vm.resize', body: 'VmResize' },
  resizeDisk: { method: 'PUT', path: '/vm.resize-disk', body: 'VmResizeDisk' },
} as const satisfies Record<string, VmmOperation>;

export type VmmOperationName = keyof typeof VmmOperations;

/** `vm.create`-style name of an operation, as the VMM's docs and logs call it. */
export function operationLabel(operation: VmmOperation): string {
  return operation.path.slice(1);
}
