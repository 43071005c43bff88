// A client for one Cloud Hypervisor VMM (one VMM runs at most one VM), over its API
// socket. Each method is one call; none retries (the caller's reconcile does). Wrong
// states come back as VmmApiError with a VmmErrorCode; socket trouble as an
// Unreachable BackendError.
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import { decodePing, decodeVmInfo } from './vmm-decoders.js';
import { VmmApiError, errorChain, isVmmApiError, VmmErrorCode } from './vmm-error.js';
import { VMM_API_ROOT, VmmOperations, operationLabel, type VmmOperation } from './vmm-operations.js';
import { checkVmmVersion } from './vmm-version.js';
import { UnixHttpTransport, type HttpAnswer, type UnixHttpTransportOptions } from './unix-http-transport.js';
import type { VmConfig, VmInfo, VmmPingResponse, VmResize, VmResizeDisk } from './vmm-types.js';

export type VmmClientOptions = UnixHttpTransportOptions;

export class VmmClient {
  private readonly transport: UnixHttpTransport;

  constructor(options: VmmClientOptions) {
    this.transport = new UnixHttpTransport(options);
  }

  get socketPath(): string {
    return this.transport.socketPath;
  }

  /** vmm.ping, whatever the version. */
  async ping(): Promise<VmmPingResponse> {
    const { body } = await this.call(VmmOperations.ping);
    return decodePing(operationLabel(VmmOperations.ping), body);
  }

  /** vmm.ping, refusing a VMM below SUPPORTED_VMM_FLOOR (Rejected, code VmmVersionUnsupported). */
  async pingSupported(): Promise<VmmPingResponse> {
    const ping = await this.ping();
    checkVmmVersion(ping, this.socketPath);
    return ping;
  }

  /** vm.create: the VM is defined, not booted. VmAlreadyCreated when the VMM has one. */
  async createVm(config: VmConfig): Promise<void> {
    await this.call(VmmOperations.createVm, config);
  }

  /** vm.boot. VmNotCreated without a VM; VmAlreadyCreated when it runs already. */
  async bootVm(): Promise<void> {
    await this.call(VmmOperations.bootVm);
  }

  /** vm.info; NotFound (VmNotCreated) when the VMM has no VM. */
  async vmInfo(): Promise<VmInfo> {
    const { body } = await this.call(VmmOperations.vmInfo);
    return decodeVmInfo(operationLabel(VmmOperations.vmInfo), body);
  }

  /** vm.info, or undefined when the VMM has no VM. */
  async findVm(): Promise<VmInfo | undefined> {
    try {
      return await this.vmInfo();
    } catch (error) {
      if (isVmmApiError(error, VmmErrorCode.VmNotCreated)) return undefined;
      throw error;
    }
  }

  /** vm.pause of a running VM. */
  async pauseVm(): Promise<void> {
    await this.call(VmmOperations.pauseVm);
  }

  /** vm.resume of a paused VM. */
  async resumeVm(): Promise<void> {
    await this.call(VmmOperations.resumeVm);
  }

  /** vm.power-button: an ACPI power button press; the guest decides what to do with it. */
  async powerButton(): Promise<void> {
    await this.call(VmmOperations.powerButton);
  }

  /** vm.shutdown: stops the VM at once (no guest involvement); the config stays, state Created. */
  async shutdownVm(): Promise<void> {
    await this.call(VmmOperations.shutdownVm);
  }

  /** vm.reboot. */
  async rebootVm(): Promise<void> {
    await this.call(VmmOperations.rebootVm);
  }

  /** vm.delete: stops the VM if it runs and forgets it; succeeds when there is none. */
  async deleteVm(): Promise<void> {
    await this.call(VmmOperations.deleteVm);
  }

  /** vm.resize: vCPUs up to `max_vcpus`, memory up to `size + hotplug_size`. */
  async resizeVm(resize: VmResize): Promise<void> {
    await this.call(VmmOperations.resizeVm, resize);
  }

  /** vm.resize-disk of the disk with that id (grows the backing file). */
  async resizeDisk(resize: VmResizeDisk): Promise<void> {
    await this.call(VmmOperations.resizeDisk, resize);
  }

  /** vmm.shutdown: the VMM process exits (its VM with it). */
  async shutdownVmm(): Promise<void> {
    try {
      await this.call(VmmOperations.shutdownVmm);
    } catch (error) {
      // The VMM may close the socket as it exits, before the answer is read: that is the
      // outcome asked for. A VMM that never answered (no socket) is still an error.
      if (isBackendError(error, BackendErrorKind.Unreachable) && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) return;
      throw error;
    }
  }

  private async call(operation: VmmOperation, body?: unknown): Promise<HttpAnswer> {
    const label = operationLabel(operation);
    const answer = await this.transport.send(label, operation.method, `${VMM_API_ROOT}${operation.path}`, body);
    // 2xx of any kind: v53.0 answers vmm.shutdown with 200 where the spec says 204.
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw new VmmApiError(label, answer.status, errorChain(answer.body));
  }
}
