// Wire types of the Cloud Hypervisor REST API, hand-written for the subset banlieue
// uses, with the spec's (snake_case) names. The spec is
// test/fixtures/cloud-hypervisor/cloud-hypervisor.openapi.yaml; the schema test
// (test/unit/backends/cloud-hypervisor/openapi.test.ts) validates a value using every
// field declared here against it, so a field the spec does not know fails there.
// Fields may be stricter than the spec (required here, optional there), never looser.

/** `VmState`. v53.0 reports a shut-down VM as `Created` (its config kept, the VM dropped). */
export const VmState = {
  Created: 'Created',
  Running: 'Running',
  Shutdown: 'Shutdown',
  Paused: 'Paused',
  BreakPoint: 'BreakPoint',
} as const;
export type VmState = (typeof VmState)[keyof typeof VmState];

/** `VmmPingResponse`. */
export interface VmmPingResponse {
  /** e.g. `v53.0.0`. */
  readonly build_version?: string;
  /** e.g. `53.0.0`; the version gate reads this. */
  readonly version: string;
  readonly pid?: number;
  /** e.g. `["io_uring", "kvm"]`. */
  readonly features?: readonly string[];
}

/** `CpusConfig`. */
export interface CpusConfig {
  readonly boot_vcpus: number;
  /** The hotplug ceiling (`vm.resize` `desired_vcpus` up to this). */
  readonly max_vcpus: number;
  /** Expose nested virtualisation to the guest. The VMM defaults to true. */
  readonly nested?: boolean;
  readonly kvm_hyperv?: boolean;
}

/** `MemoryConfig`; sizes in bytes. */
export interface MemoryConfig {
  readonly size: number;
  /** Room for `vm.resize` `desired_ram` above `size`. */
  readonly hotplug_size?: number;
  readonly shared?: boolean;
  readonly hugepages?: boolean;
  readonly hugepage_size?: number;
  readonly prefault?: boolean;
}

/** `PayloadConfig`: firmware (e.g. CLOUDHV.fd), or kernel with optional initramfs and cmdline. */
export interface PayloadConfig {
  readonly firmware?: string;
  readonly kernel?: string;
  readonly cmdline?: string;
  readonly initramfs?: string;
}

/** `ImageType`. */
export type ImageType = 'FixedVhd' | 'Qcow2' | 'Raw' | 'Vhdx' | 'Unknown';

/** `DiskConfig` (a file-backed disk: `path` required here, optional in the spec for vhost-user). */
export interface DiskConfig {
  readonly path: string;
  /** The device id `vm.resize-disk` and `vm.remove-device` name. */
  readonly id?: string;
  readonly readonly?: boolean;
  readonly direct?: boolean;
  /** The virtio-blk serial the guest sees (`/dev/disk/by-id/virtio-<serial>`). */
  readonly serial?: string;
  /** Stated rather than probed: a raw image whose first bytes look like qcow2 is not reinterpreted. */
  readonly image_type?: ImageType;
  /** Let a qcow2 image open its backing file (v53 refuses backing files unless set). */
  readonly backing_files?: boolean;
  readonly num_queues?: number;
  readonly queue_size?: number;
}

/** `NetConfig` (a tap NIC). */
export interface NetConfig {
  /** The host tap interface; created by the host beforehand. */
  readonly tap?: string;
  /** The guest MAC, `aa:bb:cc:dd:ee:ff`. */
  readonly mac?: string;
  readonly host_mac?: string;
  readonly mtu?: number;
  readonly id?: string;
  readonly num_queues?: number;
  readonly queue_size?: number;
}

/** `RngConfig`. */
export interface RngConfig {
  /** e.g. `/dev/urandom`. */
  readonly src: string;
}

/** `ConsoleMode`. */
export type ConsoleMode = 'Off' | 'Pty' | 'Tty' | 'File' | 'Socket' | 'Null';

/** `SerialConfig`: the legacy serial port. */
export interface SerialConfig {
  readonly mode: ConsoleMode;
  /** With mode File. */
  readonly file?: string;
  /** With mode Socket. */
  readonly socket?: string;
}

/** `ConsoleConfig`: the virtio console. */
export interface ConsoleConfig {
  readonly mode: ConsoleMode;
  readonly file?: string;
  readonly socket?: string;
}

/** `PlatformConfig`. */
export interface PlatformConfig {
  /**
   * The SMBIOS system UUID the guest sees (`/sys/class/dmi/id/product_uuid`). banlieue
   * sets it to the machine's UUID: it is how a VMM is recognised as ours after a restart.
   * (`uuid` is its deprecated alias; v53.0 refuses both together as a duplicate field.)
   */
  readonly system_uuid?: string;
  readonly system_serial_number?: string;
  /** SMBIOS type 11 OEM strings. */
  readonly oem_strings?: readonly string[];
}

/** `VmConfig` (the body of vm.create; echoed back by vm.info with the VMM's defaults filled in). */
export interface VmConfig {
  readonly cpus?: CpusConfig;
  readonly memory?: MemoryConfig;
  readonly payload: PayloadConfig;
  readonly disks?: readonly DiskConfig[];
  readonly net?: readonly NetConfig[];
  readonly rng?: RngConfig;
  readonly serial?: SerialConfig;
  readonly console?: ConsoleConfig;
  readonly platform?: PlatformConfig;
  readonly watchdog?: boolean;
}

/** `VmInfo`. */
export interface VmInfo {
  readonly config: VmConfig;
  readonly state: VmState;
  /** Bytes; absent when the VMM does not report it. */
  readonly memory_actual_size?: number;
}

/** `VmResize`: any subset; memory in bytes. */
export interface VmResize {
  readonly desired_vcpus?: number;
  readonly desired_ram?: number;
  readonly desired_balloon?: number;
}

/** `VmResizeDisk`; the size in bytes. */
export interface VmResizeDisk {
  readonly id: string;
  readonly desired_size: number;
}
