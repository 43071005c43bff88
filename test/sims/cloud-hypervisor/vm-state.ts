// The VM of one simulated VMM, answering as Cloud Hypervisor v53.0 does. Every status
// and error chain below was read from the real binary (../shared/bin/cloud-hypervisor,
// v53.0.0, driven with curl over its socket, with a PVH payload that halts):
//   - no VM: vm.info, vm.reboot, vm.resize, vm.resize-disk → 404 "… VM is not created";
//     vm.boot → 404 "VM config is missing"; vm.pause, vm.resume, vm.shutdown,
//     vm.power-button → 500 "VM is not running" (not 404/405 as the spec says);
//     vm.delete → 204.
//   - vm.create never validates the config (boot_vcpus 0, a missing kernel: 204); vm.boot
//     does (500 "Failed to validate config" / "Cannot open kernel file" …). A second
//     vm.create, or vm.boot of a booted VM → 500 "VM is already created".
//   - pause of a paused / resume of a running VM → 500 "InvalidStateTransition(…)".
//   - vm.shutdown (running or paused) drops the VM and keeps its config: vm.info then
//     says state "Created", never "Shutdown"; vm.boot boots it again.
//   - vm.reboot and vm.power-button work on a paused VM too (204); reboot leaves it Running.
//   - vm.delete of a running VM stops it (204).
//   - vm.resize without a booted VM edits the config (204, even beyond max_vcpus);
//     booted: vCPUs above max_vcpus, memory above size + hotplug_size → 500.
//   - vm.resize-disk without a booted VM → 500 "Failed resizing a disk image"; an unknown
//     disk id → 500 "Failed to find device …".
// The VMM's own defaults are filled into vm.info's config as v53.0 does for the fields
// banlieue reads; the rest of its echo is not reproduced.

export interface Answer {
  readonly status: number;
  /** A JSON body; none for 204. */
  readonly body?: unknown;
}

type Config = Record<string, unknown> & {
  payload?: { firmware?: string; kernel?: string; initramfs?: string };
  cpus?: { boot_vcpus?: number; max_vcpus?: number };
  memory?: { size?: number; hotplug_size?: number };
  disks?: { path?: string; id?: string }[];
};

/** What the simulated VM can see of the host: whether a file exists; growing a disk file. */
export interface SimulatedHost {
  exists(path: string): boolean;
  resizeFile(path: string, size: number): void;
}

const NO_CONTENT: Answer = { status: 204 };
const MIB = 1024 * 1024;

function fail(status: number, ...chain: string[]): Answer {
  return { status, body: ['Error from API', ...chain] };
}

export class SimulatedVm {
  private config: Config | undefined;
  /** Undefined while the VM is not booted (created or shut down). */
  private booted: 'Running' | 'Paused' | undefined;

  constructor(private readonly host: SimulatedHost) {}

  get state(): string | undefined {
    return this.config === undefined ? undefined : (this.booted ?? 'Created');
  }

  info(): Answer {
    if (!this.config) return fail(404, 'The VM info is not available', 'VM is not created');
    const config = withDefaults(this.config);
    return { status: 200, body: { config, state: this.booted ?? 'Created', memory_actual_size: config.memory.size } };
  }

  create(config: Config): Answer {
    if (this.config) return fail(500, 'The VM could not be created', 'VM is already created');
    this.config = structuredClone(config);
    return NO_CONTENT;
  }

  boot(): Answer {
    if (!this.config) return fail(404, 'The VM could not boot', 'VM config is missing');
    if (this.booted) return fail(500, 'The VM could not boot', 'VM is already created');
    const refused = this.bootRefusal(withDefaults(this.config));
    if (refused) return refused;
    this.booted = 'Running';
    return NO_CONTENT;
  }

  pause(): Answer {
    if (!this.booted) return fail(500, 'The VM could not be paused', 'VM is not running');
    if (this.booted === 'Paused')
      return fail(
        500,
        'The VM could not be paused',
        'Cannot pause VM',
        'Failed to pause migratable component',
        'Invalid transition: InvalidStateTransition(Paused, Paused)',
      );
    this.booted = 'Paused';
    return NO_CONTENT;
  }

  resume(): Answer {
    if (!this.booted) return fail(500, 'The VM could not resume', 'VM is not running');
    if (this.booted === 'Running')
      return fail(
        500,
        'The VM could not resume',
        'Cannot resume VM',
        'Failed to resume migratable component',
        'Invalid transition: InvalidStateTransition(Running, Running)',
      );
    this.booted = 'Running';
    return NO_CONTENT;
  }

  shutdown(): Answer {
    if (!this.booted) return fail(500, 'The VM could not shutdown', 'VM is not running');
    this.booted = undefined;
    return NO_CONTENT;
  }

  reboot(): Answer {
    if (!this.config) return fail(404, 'The VM could not reboot', 'VM is not created');
    if (!this.booted) return fail(500, 'The VM could not reboot', 'VM is not running');
    this.booted = 'Running';
    return NO_CONTENT;
  }

  powerButton(): Answer {
    if (!this.booted) return fail(500, 'Error triggering power button', 'VM is not running');
    return NO_CONTENT;
  }

  delete(): Answer {
    this.config = undefined;
    this.booted = undefined;
    return NO_CONTENT;
  }

  resize(resize: { desired_vcpus?: number; desired_ram?: number }): Answer {
    if (!this.config) return fail(404, 'The VM could not be resized', 'VM is not created');
    const config = withDefaults(this.config);
    if (this.booted && resize.desired_vcpus !== undefined && resize.desired_vcpus > config.cpus.max_vcpus) {
      return fail(500, 'The VM could not be resized', 'Error from CPU manager', 'Requested vCPUs exceed maximum');
    }
    if (this.booted && resize.desired_ram !== undefined && resize.desired_ram > config.memory.size + (config.memory.hotplug_size ?? 0)) {
      return fail(500, 'The VM could not be resized', 'Memory manager error', 'Not enough space in the hotplug RAM region');
    }
    this.config = {
      ...this.config,
      cpus: { ...config.cpus, ...(resize.desired_vcpus === undefined ? {} : { boot_vcpus: resize.desired_vcpus }) },
      memory: { ...config.memory, ...(resize.desired_ram === undefined ? {} : { size: resize.desired_ram }) },
    };
    return NO_CONTENT;
  }

  resizeDisk(resize: { id?: string; desired_size?: number }): Answer {
    if (!this.config) return fail(404, 'The disk could not be resized', 'VM is not created');
    if (!this.booted) return fail(500, 'The disk could not be resized', 'Failed resizing a disk image');
    const disk = this.config.disks?.find((d) => d.id === resize.id);
    if (!disk?.path)
      return fail(
        500,
        'The disk could not be resized',
        'Error from device manager',
        `Failed to find device corresponding to the given identifier: ${resize.id ?? ''}`,
      );
    this.host.resizeFile(disk.path, resize.desired_size ?? 0);
    return NO_CONTENT;
  }

  /** What v53.0's boot-time validation refuses, for the cases banlieue can cause. */
  private bootRefusal(config: ReturnType<typeof withDefaults>): Answer | undefined {
    const payload = config.payload ?? {};
    if (payload.firmware === undefined && payload.kernel === undefined) {
      return fail(
        500,
        'The VM could not boot',
        'Failed to validate config',
        'Payload configuration is not bootable',
        'No bootitem provided: neither firmware nor kernel',
      );
    }
    if (config.cpus.max_vcpus < config.cpus.boot_vcpus) {
      return fail(
        500,
        'The VM could not boot',
        'Failed to validate config',
        `Max CPUs (${config.cpus.max_vcpus}) lower than boot CPUs (${config.cpus.boot_vcpus})`,
      );
    }
    if (payload.kernel !== undefined && !this.host.exists(payload.kernel)) {
      return fail(500, 'The VM could not boot', 'Cannot open kernel file', 'No such file or directory (os error 2)');
    }
    if (payload.firmware !== undefined && !this.host.exists(payload.firmware)) {
      return fail(500, 'The VM could not boot', 'Error manipulating firmware file', 'No such file or directory (os error 2)');
    }
    const missing = (config.disks ?? []).find((disk) => disk.path !== undefined && !this.host.exists(disk.path));
    if (missing?.path !== undefined) {
      return fail(
        500,
        'The VM could not boot',
        'Error from device manager',
        'Cannot open disk path',
        `I/O error (path=${missing.path} op=open)`,
        'No such file or directory (os error 2)',
      );
    }
    return undefined;
  }
}

/** The config as v53.0 echoes it: its defaults for cpus, memory, rng, serial and console filled in. */
function withDefaults(config: Config): Config & { cpus: { boot_vcpus: number; max_vcpus: number }; memory: { size: number; hotplug_size?: number } } {
  return {
    ...config,
    cpus: { boot_vcpus: 1, max_vcpus: 1, ...config.cpus },
    memory: { size: 512 * MIB, ...config.memory },
    rng: { src: '/dev/urandom', ...(config.rng as object | undefined) },
    serial: { mode: 'Null', ...(config.serial as object | undefined) },
    console: { mode: 'Tty', ...(config.console as object | undefined) },
  };
}
