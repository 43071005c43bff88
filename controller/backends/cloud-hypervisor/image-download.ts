// VMImage sources of kind Url on this host: the image is downloaded once into
// the image directory, under a name derived from its URL, and verified against
// spec.sources[].checksum. A download is started by a lookup and never awaited
// by it (ADR 14): the row reads ImageDownloading until a later lookup finds the
// file. The file appears by rename only once complete and verified, so a
// machine never overlays half an image; a failed or refused download leaves
// nothing, and the next lookup tries again.
//
// What the host takes (urlImages in the host config, the host admin's): https
// with a checksum, unless a lab host opts in to http or unverified images; a
// redirect only within the URL's origin (image-fetch.ts); no more than
// urlImages.maxSizeMiB; no image whose header names a file on the host
// (image-header.ts), checked while it streams in and again, before each use,
// on a file already here (one downloaded before these checks existed).
import { createHash, type Hash } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { rootCertificates } from 'node:tls';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { ImageResolution } from '../backend.js';
import { checkCaPem } from '../kit/wire/tls-agent.js';
import type { HostUrlImages } from './host-config.js';
import { ImageRefusal, openImage, shownUrl, type ImageFetchOptions } from './image-fetch.js';
import { IMAGE_HEADER_BYTES, imageHeaderRefusal, readImageHeader } from './image-header.js';

/** A download that ended without an image (or was refused before it began), kept until the next lookup reports it and starts again. */
export interface DownloadFailure {
  readonly reason: Reason;
  readonly message: string;
}

const MIB = 1024 * 1024;
/** A mirror silent this long fails the download (it is tried again at the next lookup). */
const IDLE_TIMEOUT_MS = 60_000;

/** The file a Url source is kept in: `url-<hash of the URL>-<its last path segment>` inside the image directory. */
export function urlImageFile(imageDir: string, url: string): string {
  const id = createHash('sha256').update(url).digest('hex').slice(0, 16);
  const last = basename(new URL(url).pathname)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 100);
  return join(imageDir, `url-${id}${last && last !== '.' && last !== '..' ? `-${last}` : ''}`);
}

/**
 * Why the host will not download `source` at all (pure: from the spec and the host's policy), or
 * undefined. The message names the host config key that would allow it, as these are lab opt-ins.
 */
export function decideUrlSourceRefusal(source: ImageSource, policy: HostUrlImages): DownloadFailure | undefined {
  let url: URL;
  try {
    url = new URL(source.ref);
  } catch {
    return { reason: Reason.ImageUrlRefused, message: 'spec.sources[].ref is not a URL' };
  }
  if (url.protocol === 'http:' && !policy.allowHttp) {
    return {
      reason: Reason.ImageUrlRefused,
      message: `${shownUrl(url)} is not https: this host downloads images over https only (a lab host may set urlImages.allowHttp)`,
    };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { reason: Reason.ImageUrlRefused, message: `${shownUrl(url)} is not https` };
  }
  if (source.checksum === undefined && !policy.allowWithoutChecksum) {
    return {
      reason: Reason.ImageUrlRefused,
      message: `${shownUrl(url)} has no spec.sources[].checksum: this host downloads only images it can verify (a lab host may set urlImages.allowWithoutChecksum)`,
    };
  }
  return undefined;
}

/** The downloads of one backend instance (its role): at most one per file at a time. */
export class ImageDownloads {
  private readonly running = new Map<string, Promise<void>>();
  private readonly failed = new Map<string, DownloadFailure>();
  private readonly stopping = new AbortController();
  private readonly fetchOptions: ImageFetchOptions;

  /** Reads `policy.caFile` now: a host config naming a CA bundle that is not one fails the role's start. */
  constructor(
    private readonly imageDir: string,
    private readonly policy: HostUrlImages,
  ) {
    this.fetchOptions = { allowHttp: policy.allowHttp, idleTimeoutMs: IDLE_TIMEOUT_MS, ...(policy.caFile ? { ca: withMirrorCa(policy.caFile) } : {}) };
  }

  /** Ready once the file is here and fit to use; else the download is started (or still running) and the row says so. */
  async resolve(source: ImageSource): Promise<ImageResolution> {
    const refused = decideUrlSourceRefusal(source, this.policy);
    if (refused) return { ready: false, ...refused };
    const file = urlImageFile(this.imageDir, source.ref);
    if ((await stat(file).catch(() => undefined))?.isFile()) {
      const unfit = await headerRefusalOf(file);
      // Left in place: machines made before may overlay it; the admin removes it once they are gone.
      if (unfit) return { ready: false, reason: Reason.ImageHasBackingFile, message: `${file} ${unfit}; not used (remove it once no machine uses it)` };
      return { ready: true, resolvedRef: file };
    }
    const failure = this.failed.get(file);
    if (failure && !this.running.has(file)) {
      this.failed.delete(file);
      this.start(file, source);
      return { ready: false, reason: failure.reason, message: `${failure.message}; downloading again` };
    }
    if (!this.running.has(file)) this.start(file, source);
    return { ready: false, reason: Reason.ImageDownloading, message: `downloading ${shownUrl(new URL(source.ref))} to ${file}` };
  }

  /** Ends the downloads under way (the role stops); their partial files are removed. */
  async close(): Promise<void> {
    this.stopping.abort();
    await Promise.all([...this.running.values()]);
  }

  private start(file: string, source: ImageSource): void {
    const done = download(source, file, this.fetchOptions, this.policy.maxSizeMiB, this.stopping.signal)
      .then((failure) => {
        if (failure) this.failed.set(file, failure);
      })
      .finally(() => this.running.delete(file));
    this.running.set(file, done);
  }
}

/** Downloads `source` to `file` (by rename of a partial file); resolves to why it failed, never rejects. */
async function download(
  source: ImageSource,
  file: string,
  options: ImageFetchOptions,
  maxSizeMiB: number,
  signal: AbortSignal,
): Promise<DownloadFailure | undefined> {
  const partial = `${file}.part-${process.pid}`;
  const url = new URL(source.ref);
  const [algorithm, expected] = source.checksum?.split(':') ?? [];
  try {
    const response = await openImage(url, options, signal);
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) {
      response.resume();
      return { reason: Reason.LookupFailed, message: `GET ${shownUrl(url)}: HTTP ${status} ${response.statusMessage ?? ''}`.trimEnd() };
    }
    const announced = Number(response.headers['content-length'] ?? Number.NaN);
    if (announced > maxSizeMiB * MIB) {
      response.destroy();
      return tooLarge(url, maxSizeMiB, `announces ${announced} bytes`);
    }
    const guard = new ImageGuard(url, maxSizeMiB, algorithm ? createHash(algorithm) : undefined);
    await pipeline(response, guard, createWriteStream(partial, { mode: 0o644 }), { signal });
    const actual = guard.digest();
    if (actual !== undefined && actual !== expected) {
      return {
        reason: Reason.ImageChecksumMismatch,
        message: `${shownUrl(url)} has ${algorithm ?? ''}:${actual}, not spec.sources[].checksum ${source.checksum ?? ''}; discarded`,
      };
    }
    await rename(partial, file);
    return undefined;
  } catch (error) {
    if (error instanceof ImageRefusal) return { reason: error.reason, message: error.message };
    return { reason: Reason.LookupFailed, message: `GET ${shownUrl(url)}: ${(error as Error).message}` };
  } finally {
    await rm(partial, { force: true });
  }
}

function tooLarge(url: URL, maxSizeMiB: number, what: string): DownloadFailure {
  return { reason: Reason.ImageTooLarge, message: `${shownUrl(url)} ${what}, more than this host's urlImages.maxSizeMiB ${maxSizeMiB}; discarded` };
}

/**
 * Passes an image through while it streams in: counts it against the cap, hashes it, and
 * reads its header from the first IMAGE_HEADER_BYTES; fails the stream (an ImageRefusal) as
 * soon as the image is too large or its header names a file on the host.
 */
class ImageGuard extends Transform {
  private bytes = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private inspected = false;

  constructor(
    private readonly url: URL,
    private readonly maxSizeMiB: number,
    private readonly hash: Hash | undefined,
  ) {
    super();
  }

  /** The hex digest of what passed, once the stream ended; undefined without a checksum to check. */
  digest(): string | undefined {
    return this.hash?.digest('hex');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxSizeMiB * MIB) {
      const { message } = tooLarge(this.url, this.maxSizeMiB, `sent more than ${this.maxSizeMiB * MIB} bytes`);
      callback(new ImageRefusal(Reason.ImageTooLarge, message));
      return;
    }
    if (!this.inspected) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      const refusal = this.headBytes >= IMAGE_HEADER_BYTES ? this.inspect() : null;
      if (refusal) {
        callback(refusal);
        return;
      }
    }
    this.hash?.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.inspected ? null : this.inspect());
  }

  private inspect(): ImageRefusal | null {
    this.inspected = true;
    const head = Buffer.concat(this.head).subarray(0, IMAGE_HEADER_BYTES);
    this.head = [];
    const refusal = imageHeaderRefusal(readImageHeader(head));
    return refusal ? new ImageRefusal(Reason.ImageHasBackingFile, `${shownUrl(this.url)} ${refusal}; discarded`) : null;
  }
}

/** Why the image at `file` is not to be used, from its header; undefined when it is fit. */
async function headerRefusalOf(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(IMAGE_HEADER_BYTES);
    const { bytesRead } = await handle.read(head, 0, IMAGE_HEADER_BYTES, 0);
    return imageHeaderRefusal(readImageHeader(head.subarray(0, bytesRead)));
  } finally {
    await handle.close();
  }
}

/** The system's CAs and the host's mirror CAs (Node's `ca` replaces the defaults; the host adds to them). */
function withMirrorCa(caFile: string): string[] {
  const pem = readFileSync(caFile, 'utf8');
  try {
    checkCaPem(pem);
  } catch (error) {
    throw new Error(`urlImages.caFile ${caFile}: ${(error as Error).message}`);
  }
  return [...rootCertificates, pem];
}
