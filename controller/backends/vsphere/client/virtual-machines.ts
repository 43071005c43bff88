// VM reads and operations: clone, reconfigure, power, destroy, template.
// Task methods wait for their task; startClone returns the task for callers
// that keep it (to wait it out after a restart instead of cloning twice).
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { PropertyCollector } from './property-collector.js';
import type { VimInvoker } from './session.js';
import type { TaskWaitOptions, Tasks } from './tasks.js';
import type { EthernetCard, ManagedObjectReference, VmHardware, VmSummary } from './vim-types.js';
import { VM_SUMMARY_PATHS, toDiskControllers, toEthernetCards, toVirtualDisks, toVmSummary } from './vm-decoders.js';
import { cloneSpecFields, configSpecFields, type CloneSpec, type VmConfigSpec } from './vm-specs.js';
import { moRefFields, toBoolean, toMoRef, toNumber } from './wire-values.js';
import type { XmlFields } from './soap-envelope.js';

export class VirtualMachines {
  constructor(
    private readonly vim: VimInvoker,
    private readonly properties: PropertyCollector,
    private readonly tasks: Tasks,
  ) {}

  /** NotFound when the VM does not exist. */
  async summary(vm: ManagedObjectReference): Promise<VmSummary> {
    return toVmSummary(await this.properties.retrieveOne(vm, VM_SUMMARY_PATHS));
  }

  /**
   * The summary and the extraConfig values of `keys`, in one read; a key the VM does not have
   * is absent from the map (vcsim leaves it out, vCenter may list it as missing). Keys hold no `"`.
   */
  async summaryWithExtraConfig(vm: ManagedObjectReference, keys: readonly string[]): Promise<{ summary: VmSummary; extraConfig: Map<string, string> }> {
    const paths = new Map(keys.map((key) => [`config.extraConfig["${key}"]`, key]));
    const content = await this.properties.retrieveOne(vm, [...VM_SUMMARY_PATHS, ...paths.keys()]);
    const extraConfig = new Map<string, string>();
    for (const [path, key] of paths) {
      const value = content.props.get(path)?.childText('value');
      if (value !== undefined) extraConfig.set(key, value);
    }
    return { summary: toVmSummary(content), extraConfig };
  }

  /**
   * Name and template flag of every VM and template under `root`: the light
   * listing for finding one by name (no guest data for thousands of VMs).
   */
  async names(root: ManagedObjectReference): Promise<{ ref: ManagedObjectReference; name: string; template: boolean }[]> {
    const contents = await this.properties.listManagedObjects(root, [{ type: 'VirtualMachine', pathSet: ['name', 'config.template'] }]);
    return contents.map((c) => ({ ref: c.obj, name: c.props.get('name')?.text ?? '', template: toBoolean(c.props.get('config.template')) ?? false }));
  }

  /** The template named `name` under `root`, else (unless `templatesOnly`) a VM of that name: CAPV clones either. */
  async findNamed(root: ManagedObjectReference, name: string, options: { templatesOnly?: boolean } = {}): Promise<ManagedObjectReference | undefined> {
    const matches = (await this.names(root)).filter((vm) => vm.name === name && (vm.template || !options.templatesOnly));
    return (matches.find((vm) => vm.template) ?? matches[0])?.ref;
  }

  /** Whether `ref` is a VM template (config.template); false for a VM that is not one, and for any other object. */
  async isTemplate(ref: ManagedObjectReference): Promise<boolean> {
    if (ref.type !== 'VirtualMachine') return false;
    const content = await this.properties.retrieveOne(ref, ['config.template']);
    return toBoolean(content.props.get('config.template')) ?? false;
  }

  /** Every VM and template under `root` (a folder, datacenter, pool…). */
  async list(root: ManagedObjectReference): Promise<VmSummary[]> {
    const contents = await this.properties.listManagedObjects(root, [{ type: 'VirtualMachine', pathSet: VM_SUMMARY_PATHS }]);
    return contents.map(toVmSummary);
  }

  async ethernetCards(vm: ManagedObjectReference): Promise<EthernetCard[]> {
    const content = await this.properties.retrieveOne(vm, ['config.hardware.device']);
    return toEthernetCards(content.props.get('config.hardware.device'));
  }

  /** Sizing, firmware and devices in one read, so they describe one config version. */
  async hardware(vm: ManagedObjectReference): Promise<VmHardware> {
    const content = await this.properties.retrieveOne(vm, ['config.hardware.device', 'config.hardware.numCPU', 'config.hardware.memoryMB', 'config.firmware']);
    const devices = content.props.get('config.hardware.device');
    return {
      numCPUs: toNumber(content.props.get('config.hardware.numCPU')),
      memoryMB: toNumber(content.props.get('config.hardware.memoryMB')),
      firmware: content.props.get('config.firmware')?.text,
      cards: toEthernetCards(devices),
      disks: toVirtualDisks(devices),
      diskControllers: toDiskControllers(devices),
    };
  }

  /** `config.extraConfig` as key → value (values as their text). */
  async extraConfig(vm: ManagedObjectReference): Promise<Map<string, string>> {
    const content = await this.properties.retrieveOne(vm, ['config.extraConfig']);
    const options = content.props.get('config.extraConfig')?.childrenNamed('OptionValue') ?? [];
    return new Map(options.map((option) => [option.childText('key') ?? '', option.childText('value') ?? '']));
  }

  /** CloneVM_Task; resolves to the Task. `folder` is where the clone is registered. */
  async startClone(source: ManagedObjectReference, folder: ManagedObjectReference, name: string, spec: CloneSpec): Promise<ManagedObjectReference> {
    return this.startTask('CloneVM_Task', source, { folder: moRefFields(folder), name, spec: cloneSpecFields(spec) });
  }

  /** Clones and waits; resolves to the new VM. */
  async clone(
    source: ManagedObjectReference,
    folder: ManagedObjectReference,
    name: string,
    spec: CloneSpec,
    wait?: TaskWaitOptions,
  ): Promise<ManagedObjectReference> {
    const task = await this.startClone(source, folder, name, spec);
    const { result } = await this.tasks.wait(task, wait);
    if (result === undefined) throw new BackendError(BackendErrorKind.TaskFailed, `CloneVM_Task ${task.value}: succeeded without a VM`);
    return toMoRef(result);
  }

  async reconfigure(vm: ManagedObjectReference, spec: VmConfigSpec, wait?: TaskWaitOptions): Promise<void> {
    await this.runTask('ReconfigVM_Task', vm, { spec: configSpecFields(spec) }, wait);
  }

  /**
   * Already on: fault InvalidPowerState (vcsim raises it in the task, so kind
   * TaskFailed; branch on `faultType`, not on kind).
   */
  async powerOn(vm: ManagedObjectReference, wait?: TaskWaitOptions): Promise<void> {
    await this.runTask('PowerOnVM_Task', vm, {}, wait);
  }

  /** A hard power-off. Already off: fault InvalidPowerState, as for powerOn. */
  async powerOff(vm: ManagedObjectReference, wait?: TaskWaitOptions): Promise<void> {
    await this.runTask('PowerOffVM_Task', vm, {}, wait);
  }

  /** Not powered on (off, or already suspended): fault InvalidPowerState, as for powerOn. */
  async suspend(vm: ManagedObjectReference, wait?: TaskWaitOptions): Promise<void> {
    await this.runTask('SuspendVM_Task', vm, {}, wait);
  }

  /**
   * Asks VMware Tools for a clean shutdown and returns at once (not a task);
   * watch runtime.powerState. vCenter refuses it (ToolsUnavailable) without
   * running VMware Tools; vcsim does not check.
   */
  async shutdownGuest(vm: ManagedObjectReference): Promise<void> {
    await this.vim.invoke('ShutdownGuest', vm);
  }

  /**
   * Destroy_Task. Already gone: NotFound (the call fails). Powered on: the task
   * fails with InvalidPowerState (TaskFailed).
   */
  async destroy(vm: ManagedObjectReference, wait?: TaskWaitOptions): Promise<void> {
    await this.runTask('Destroy_Task', vm, {}, wait);
  }

  /** MarkAsTemplate (not a task). Rejected (InvalidPowerState) unless powered off. */
  async markAsTemplate(vm: ManagedObjectReference): Promise<void> {
    await this.vim.invoke('MarkAsTemplate', vm);
  }

  private async runTask(method: string, vm: ManagedObjectReference, args: XmlFields, wait?: TaskWaitOptions): Promise<void> {
    await this.tasks.wait(await this.startTask(method, vm, args), wait);
  }

  private async startTask(method: string, self: ManagedObjectReference, args: XmlFields): Promise<ManagedObjectReference> {
    const task = (await this.vim.invoke(method, self, args)).child('returnval');
    if (task === undefined) throw new Error(`${method}: no Task in the response`);
    return toMoRef(task);
  }
}
