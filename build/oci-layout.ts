// Writes an OCI image layout (image-spec v1.1: oci-layout, index.json,
// blobs/sha256/...) for banlieue's one-layer image, from the layer
// build/image.sh made. JSON is written with a fixed key order and no
// whitespace, so the same layer and build info give the same digests.
//
//   npx tsx build/oci-layout.ts <build-info file> <layer.tar> <layer.tar.gz> <layout dir>
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { argv, exit, stderr } from 'node:process';
import { readBuildInfo } from './build-info.js';
import { ImageConfig, MediaType } from './image-config.js';

interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}

class Layout {
  constructor(private readonly dir: string) {
    mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
  }

  private blobPath(digest: string): string {
    return join(this.dir, 'blobs', 'sha256', digest.slice('sha256:'.length));
  }

  /** A JSON document as a blob. */
  json(mediaType: string, doc: unknown): Descriptor {
    const bytes = Buffer.from(JSON.stringify(doc));
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    writeFileSync(this.blobPath(digest), bytes);
    return { mediaType, digest, size: bytes.length };
  }

  /** A file moved in as a blob. */
  async file(mediaType: string, path: string): Promise<Descriptor> {
    const digest = await sha256Of(path);
    const size = statSync(path).size;
    renameSync(path, this.blobPath(digest));
    return { mediaType, digest, size };
  }

  finish(manifest: Descriptor, refName: string): void {
    writeFileSync(join(this.dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    const index = {
      schemaVersion: 2,
      mediaType: MediaType.index,
      manifests: [{ ...manifest, annotations: { 'org.opencontainers.image.ref.name': refName } }],
    };
    writeFileSync(join(this.dir, 'index.json'), JSON.stringify(index));
  }
}

async function main(): Promise<void> {
  const [infoPath, layerTar, layerGz, dir] = argv.slice(2);
  if (!infoPath || !layerTar || !layerGz || !dir) throw new Error('usage: oci-layout.ts <build-info> <layer.tar> <layer.tar.gz> <layout dir>');
  const { version, commit, sourceDateEpoch } = readBuildInfo(infoPath);
  const image = new ImageConfig({ version, commit, created: new Date(sourceDateEpoch * 1000).toISOString() });

  const layout = new Layout(dir);
  const diffId = await sha256Of(layerTar);
  const layer = await layout.file(MediaType.layer, layerGz);
  const config = layout.json(MediaType.config, image.config(diffId));
  const manifest = layout.json(MediaType.manifest, {
    schemaVersion: 2,
    mediaType: MediaType.manifest,
    config,
    layers: [layer],
    annotations: image.annotations(),
  });
  layout.finish(manifest, image.tag);
}

main().catch((err: unknown) => {
  stderr.write(`oci-layout.ts: ${err instanceof Error ? err.message : String(err)}\n`);
  exit(1);
});
