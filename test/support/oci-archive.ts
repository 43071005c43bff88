// Reading an OCI image archive (image-spec image-layout) as a runtime would:
// index.json → the manifest → its config and layers, every blob checked
// against its digest; and unpacking the layers into a root filesystem.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** The `config` of an image configuration: what a runtime starts. */
export interface OciImageConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
}

export interface OciImage {
  /** The manifest's digest: the image's digest in a registry. */
  readonly digest: string;
  /** org.opencontainers.image.ref.name of the index entry (the tag). */
  readonly refName: string | undefined;
  readonly manifest: { config: Descriptor; layers: Descriptor[]; annotations?: Record<string, string> };
  readonly config: { architecture: string; os: string; created?: string; config: OciImageConfig; rootfs: { diff_ids: string[] } };
}

function blob(layout: string, d: Descriptor): Buffer {
  const bytes = readFileSync(join(layout, 'blobs', ...d.digest.split(':')));
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (digest !== d.digest || bytes.length !== d.size)
    throw new Error(`blob ${d.digest}: content has digest ${digest}, size ${bytes.length} (descriptor size ${d.size})`);
  return bytes;
}

function readLayout(layout: string): OciImage {
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
  if (index.manifests.length !== 1) throw new Error(`index.json lists ${index.manifests.length} manifests, expected one image`);
  const entry = index.manifests[0] as Descriptor;
  const manifest = JSON.parse(blob(layout, entry).toString('utf8')) as OciImage['manifest'];
  const config = JSON.parse(blob(layout, manifest.config).toString('utf8')) as OciImage['config'];
  for (const layer of manifest.layers) blob(layout, layer);
  return { digest: entry.digest, refName: entry.annotations?.['org.opencontainers.image.ref.name'], manifest, config };
}

async function withLayout<T>(archive: string, use: (layout: string) => Promise<T>): Promise<T> {
  const layout = mkdtempSync(join(tmpdir(), 'banlieue-oci-'));
  try {
    await run('tar', ['-xf', archive, '-C', layout], { timeout: 300_000 });
    return await use(layout);
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}

/** The image in an archive, every blob verified. */
export function readOciArchive(archive: string): Promise<OciImage> {
  return withLayout(archive, async (layout) => readLayout(layout));
}

/** Unpack the image's layers in order into `rootfs` (owners kept: run as root). */
export function unpackImage(archive: string, rootfs: string): Promise<OciImage> {
  return withLayout(archive, async (layout) => {
    const image = readLayout(layout);
    // A runtime's root is 0755; a fresh temporary directory is 0700, which the image's user could not enter.
    chmodSync(rootfs, 0o755);
    for (const layer of image.manifest.layers) {
      await run('tar', ['-xzf', join(layout, 'blobs', ...layer.digest.split(':')), '-C', rootfs, '--numeric-owner', '--same-owner', '--same-permissions'], {
        timeout: 300_000,
      });
    }
    return image;
  });
}
