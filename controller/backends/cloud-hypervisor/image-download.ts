// VMImage sources of kind Url on this host: the image is downloaded once into
// the image directory, under a name derived from its URL, and verified against
// spec.sources[].checksum when there is one. A download is started by a lookup
// and never awaited by it (ADR 14): the row reads ImageDownloading until a later
// lookup finds the file. The file appears by rename only once complete and
// verified, so a machine never overlays half an image; a failed or mismatched
// download leaves nothing, and the next lookup tries again.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { ImageResolution } from '../backend.js';

/** A download that ended without an image, kept until the next lookup reports it and starts again. */
interface Failed {
  readonly reason: Reason;
  readonly message: string;
}

/** The file a Url source is kept in: `url-<hash of the URL>-<its last path segment>` inside the image directory. */
export function urlImageFile(imageDir: string, url: string): string {
  const id = createHash('sha256').update(url).digest('hex').slice(0, 16);
  const last = basename(new URL(url).pathname)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 100);
  return join(imageDir, `url-${id}${last && last !== '.' && last !== '..' ? `-${last}` : ''}`);
}

/** The downloads of one backend instance (its role): at most one per file at a time. */
export class ImageDownloads {
  private readonly running = new Map<string, Promise<void>>();
  private readonly failed = new Map<string, Failed>();
  private readonly stopping = new AbortController();

  constructor(private readonly imageDir: string) {}

  /** Ready once the file is here; else the download is started (or still running) and the row says so. */
  async resolve(source: ImageSource): Promise<ImageResolution> {
    const file = urlImageFile(this.imageDir, source.ref);
    if ((await stat(file).catch(() => undefined))?.isFile()) return { ready: true, resolvedRef: file };
    const failure = this.failed.get(file);
    if (failure && !this.running.has(file)) {
      this.failed.delete(file);
      this.start(file, source);
      return { ready: false, reason: failure.reason, message: `${failure.message}; downloading again` };
    }
    if (!this.running.has(file)) this.start(file, source);
    return { ready: false, reason: Reason.ImageDownloading, message: `downloading ${source.ref} to ${file}` };
  }

  /** Ends the downloads under way (the role stops); their partial files are removed. */
  async close(): Promise<void> {
    this.stopping.abort();
    await Promise.all([...this.running.values()]);
  }

  private start(file: string, source: ImageSource): void {
    const done = download(source, file, this.stopping.signal)
      .then((failure) => {
        if (failure) this.failed.set(file, failure);
      })
      .finally(() => this.running.delete(file));
    this.running.set(file, done);
  }
}

/** Downloads `source` to `file` (by rename of a partial file); resolves to why it failed, never rejects. */
async function download(source: ImageSource, file: string, signal: AbortSignal): Promise<Failed | undefined> {
  const partial = `${file}.part-${process.pid}`;
  const [algorithm, expected] = source.checksum?.split(':') ?? [];
  const hash = algorithm ? createHash(algorithm) : undefined;
  try {
    const response = await fetch(source.ref, { signal });
    if (!response.ok || !response.body) return { reason: Reason.LookupFailed, message: `GET ${source.ref}: HTTP ${response.status} ${response.statusText}` };
    const digest = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash?.update(chunk);
        callback(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), digest, createWriteStream(partial, { mode: 0o644 }), { signal });
    const actual = hash?.digest('hex');
    if (hash && actual !== expected) {
      return {
        reason: Reason.ImageChecksumMismatch,
        message: `${source.ref} has ${algorithm ?? ''}:${actual ?? ''}, not spec.sources[].checksum ${source.checksum ?? ''}; discarded`,
      };
    }
    await rename(partial, file);
    return undefined;
  } catch (error) {
    return { reason: Reason.LookupFailed, message: `GET ${source.ref}: ${(error as Error).message}` };
  } finally {
    await rm(partial, { force: true });
  }
}
