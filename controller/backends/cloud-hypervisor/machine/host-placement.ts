// Where a machine's pieces go on this host: the storage class's directory, the
// bridge of each NIC's network class, the image file and the payload to boot.
// The machine names classes and an image; the host config and the failure
// domain this provider published (raw: Provider class → host class) say what
// they are. A host path never comes from the machine: an image path must stay
// inside the image directory.
import { access, readFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { PayloadConfig } from '../client/vmm-types.js';
import { RAW_HOST, rawNetworkClass, rawStorageClass } from '../discovery.js';
import type { HostConfig } from '../host-config.js';
import { macOf, tapName } from './nic-identity.js';

export interface PlacedNic {
  readonly name: string;
  readonly tap: string;
  readonly mac: string;
  readonly bridge: string;
}

export interface HostPlacement {
  /** `<storage class directory>/<uuid>`. */
  readonly diskDir: string;
  readonly image: string;
  readonly nics: readonly PlacedNic[];
}

/** Throws Rejected unless the machine was placed on this host (a failure domain another host published). */
export function assertThisHost(config: HostConfig, raw: Readonly<Record<string, string>>): void {
  const host = raw[RAW_HOST];
  if (host !== undefined && host !== config.hostName) {
    throw new BackendError(BackendErrorKind.Rejected, `the machine's failure domain is on host ${host}; this provider runs on ${config.hostName}`, {
      code: 'WrongHost',
    });
  }
}

/** Disk directory, image and NICs of the machine (pure). */
export function placeOnHost(config: HostConfig, uuid: string, spec: CloudHypervisorMachineSpec, raw: Readonly<Record<string, string>>): HostPlacement {
  if (spec.bootSource.kind !== 'image') {
    throw new BackendError(BackendErrorKind.Rejected, `spec.bootSource.kind ${spec.bootSource.kind} is not supported by this version: only image`);
  }
  const storageClass = raw[rawStorageClass(spec.storageClass)];
  const storageDir = storageClass === undefined ? undefined : config.storageClasses[storageClass];
  if (storageDir === undefined) {
    throw new BackendError(
      BackendErrorKind.Rejected,
      `spec.storageClass "${spec.storageClass}" is not offered by host ${config.hostName} (not in its failure domain)`,
    );
  }
  const nics = (spec.nics ?? []).map((nic, i): PlacedNic => {
    const hostClass = raw[rawNetworkClass(nic.networkClass)];
    const bridge = hostClass === undefined ? undefined : config.networkClasses[hostClass];
    if (bridge === undefined) {
      throw new BackendError(
        BackendErrorKind.Rejected,
        `spec.nics[${i}].networkClass "${nic.networkClass}" is not offered by host ${config.hostName} (not in its failure domain)`,
      );
    }
    return { name: nic.name, tap: tapName(uuid, i), mac: macOf(uuid, i, nic.macAddress), bridge };
  });
  return { diskDir: join(storageDir, uuid), image: imagePath(config, spec.bootSource.image), nics };
}

/** The image file: a name or path inside the image directory; anything escaping it is refused. */
export function imagePath(config: HostConfig, image: string): string {
  const path = resolve(config.imageDir, image);
  const inside = relative(config.imageDir, path);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    throw new BackendError(BackendErrorKind.Rejected, `image "${image}" is not a file in the image directory ${config.imageDir}`);
  }
  return path;
}

/**
 * What the VM boots: a kernel shipped beside the image (`<image>.kernel`, with
 * optional `<image>.initramfs` and `<image>.cmdline`), else the host's firmware.
 */
export async function payloadFor(config: HostConfig, image: string): Promise<PayloadConfig> {
  const kernel = `${image}.kernel`;
  if (await exists(kernel)) {
    const initramfs = `${image}.initramfs`;
    const cmdline = await readOptional(`${image}.cmdline`);
    return { kernel, ...((await exists(initramfs)) ? { initramfs } : {}), ...(cmdline ? { cmdline } : {}) };
  }
  if (config.vmm.firmware !== undefined) return { firmware: config.vmm.firmware };
  throw new BackendError(BackendErrorKind.Rejected, `image ${image} has no ${kernel} beside it and the host config names no vmm.firmware: nothing to boot`);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function readOptional(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
}
