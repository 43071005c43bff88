// What a Cloud Hypervisor host refuses to download for a VMImage Url source, each
// threat served by a real server on loopback and looked up through the real
// backend: a plain-http URL, a source without a checksum, a redirect to another
// origin, an image over the host's size cap (announced and not), a qcow2 image
// naming a backing file on the host. Each is refused with its reason on the row,
// and leaves no file in the image directory, whole or partial. A lab host's
// opt-in takes http and unverified images; the other guards still hold there.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { Backend, ImageResolution } from '../../../controller/backends/backend.js';
import { cloudHypervisorBackend } from '../../../controller/backends/cloud-hypervisor/ch-backend.js';
import type { HostUrlImages } from '../../../controller/backends/cloud-hypervisor/host-config.js';
import { urlImageFile } from '../../../controller/backends/cloud-hypervisor/image-download.js';
import { urlImageHost, type UrlImageHost } from '../../support/cloud-hypervisor/url-image-host.js';
import { createTestPki, type IssuedCertificate } from '../../support/test-pki.js';
import { waitFor } from '../../support/wait.js';

const run = promisify(execFile);
const MIB = 1024 * 1024;
const IMAGE = Buffer.alloc(MIB / 2, 'banlieue image ');
const BIG = Buffer.alloc(2 * MIB, 'too big ');
const sha256 = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const connection = { endpoint: '', credentials: {}, insecureSkipTLSVerify: false };

/** A loopback server that counts the requests it answers, by path. */
interface Peer {
  readonly server: Server;
  readonly base: string;
  readonly requests: string[];
}

/** A server on `host` answering with `routes` (given its own base URL): https with `cert`, else http. */
async function serve(host: string, routes: (req: IncomingMessage, res: ServerResponse, base: string) => void, cert?: IssuedCertificate): Promise<Peer> {
  const requests: string[] = [];
  let base = '';
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    requests.push(req.url ?? '');
    routes(req, res, base);
  };
  const server = cert ? createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  base = `${cert ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}`;
  return { server, base, requests };
}

describe('Cloud Hypervisor Url images: what the host refuses to download', () => {
  let dir: string;
  let caFile: string;
  let origin: Peer;
  let elsewhere: Peer;
  let plain: Peer;
  let backingImage: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bnlguard-'));
    for (const sub of ['images', 'pki', 'work']) mkdirSync(join(dir, sub));
    const pki = await createTestPki(join(dir, 'pki'), 'banlieue-image-mirror-ca');
    caFile = pki.caFile;
    // A qcow2 image whose header names the host's disk as its backing file (-u: not opened here).
    const made = join(dir, 'work', 'backed.qcow2');
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-u', '-b', '/dev/sda', '-F', 'raw', made, '64M'], { timeout: 60_000 });
    backingImage = readFileSync(made);

    const routes = (req: IncomingMessage, res: ServerResponse, base: string): void => {
      const path = req.url ?? '';
      if (path.startsWith('/images/')) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(IMAGE);
      else if (path === '/backed.qcow2') res.writeHead(200).end(backingImage);
      else if (path === '/big.raw') res.writeHead(200, { 'content-length': String(BIG.length) }).end(BIG);
      else if (path === '/big-unannounced.raw') {
        // Chunked: no Content-Length, so only counting the bytes finds it too big.
        res.writeHead(200);
        for (let at = 0; at < BIG.length; at += 64 * 1024) res.write(BIG.subarray(at, at + 64 * 1024));
        res.end();
      } else if (path === '/redirect/elsewhere') res.writeHead(302, { location: `${elsewhere.base}/images/redirected.raw` }).end();
      else if (path === '/redirect/same-origin') res.writeHead(302, { location: `${base}/images/moved.raw` }).end();
      else res.writeHead(404).end();
    };
    origin = await serve('127.0.0.1', routes, await pki.issueServer('origin', '127.0.0.1'));
    elsewhere = await serve('127.0.0.2', routes, await pki.issueServer('elsewhere', '127.0.0.2'));
    plain = await serve('127.0.0.1', routes);
  });

  afterAll(async () => {
    for (const peer of [origin, elsewhere, plain]) if (peer) await new Promise((resolve) => peer.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** The host of these tests: the mirror CA trusted, a 1 MiB cap, and `urlImages` on top. */
  const host = (urlImages: Partial<HostUrlImages> = {}): UrlImageHost => urlImageHost(dir, { caFile, maxSizeMiB: 1, ...urlImages });
  const source = (url: string, checksum?: string): ImageSource => ({
    providerClass: 'cloud-hypervisor',
    kind: 'Url',
    ref: url,
    ...(checksum ? { checksum } : {}),
  });
  const images = (): string[] => readdirSync(join(dir, 'images'));

  /**
   * The row a host settles on for `s` (ready, or a reason other than ImageDownloading),
   * then the role stops, ending any download the last lookup started again.
   */
  async function settle(s: ImageSource, urlImages: Partial<HostUrlImages> = {}): Promise<ImageResolution> {
    const { config, provider } = host(urlImages);
    const backend: Backend = cloudHypervisorBackend(config);
    try {
      return await waitFor(
        `the row of ${s.ref} to settle`,
        async () => {
          const row = await backend.resolveImage(provider, connection, s);
          return row.reason === 'ImageDownloading' ? undefined : row;
        },
        90_000,
      );
    } finally {
      await backend.close();
    }
  }
  const fileOf = (url: string): string => urlImageFile(join(dir, 'images'), url);
  const leftOf = (url: string): string[] => {
    const name = fileOf(url).slice(join(dir, 'images').length + 1);
    return images().filter((f) => f.startsWith(name));
  };

  it('downloads an https image with its checksum from a mirror whose CA the host trusts', async () => {
    const url = `${origin.base}/images/good.raw`;
    const row = await settle(source(url, sha256(IMAGE)));
    expect(row).toEqual({ ready: true, resolvedRef: fileOf(url) });
    expect(readFileSync(fileOf(url)).equals(IMAGE)).toBe(true);
  });

  it('refuses a plain-http URL before any request: ImageUrlRefused, nothing written', async () => {
    const url = `${plain.base}/images/plain.raw`;
    const row = await settle(source(url, sha256(IMAGE)));
    expect(row).toMatchObject({ ready: false, reason: 'ImageUrlRefused' });
    expect(row.message).toMatch(/https/);
    expect(row.message).toMatch(/urlImages\.allowHttp/);
    expect(plain.requests).not.toContain('/images/plain.raw');
    expect(leftOf(url)).toEqual([]);
  });

  it('refuses a Url source without a checksum before any request: ImageUrlRefused, nothing written', async () => {
    const url = `${origin.base}/images/unverified.raw`;
    const row = await settle(source(url));
    expect(row).toMatchObject({ ready: false, reason: 'ImageUrlRefused' });
    expect(row.message).toMatch(/spec\.sources\[\]\.checksum/);
    expect(row.message).toMatch(/urlImages\.allowWithoutChecksum/);
    expect(origin.requests).not.toContain('/images/unverified.raw');
    expect(leftOf(url)).toEqual([]);
  });

  it('refuses a redirect to another host without following it: ImageRedirectRefused, nothing written', async () => {
    const url = `${origin.base}/redirect/elsewhere`;
    const row = await settle(source(url, sha256(IMAGE)));
    expect(row).toMatchObject({ ready: false, reason: 'ImageRedirectRefused' });
    expect(row.message).toContain(elsewhere.base);
    expect(elsewhere.requests).toEqual([]);
    expect(leftOf(url)).toEqual([]);
  });

  it('follows a redirect that stays on the same origin', async () => {
    const url = `${origin.base}/redirect/same-origin`;
    const row = await settle(source(url, sha256(IMAGE)));
    expect(row).toEqual({ ready: true, resolvedRef: fileOf(url) });
    expect(origin.requests).toContain('/images/moved.raw');
  });

  it.each([
    ['announced by Content-Length', '/big.raw'],
    ['sent without a length', '/big-unannounced.raw'],
  ])('refuses an image over the size cap, %s: ImageTooLarge, nothing written', async (_how, path) => {
    const url = `${origin.base}${path}`;
    const row = await settle(source(url, sha256(BIG)));
    expect(row).toMatchObject({ ready: false, reason: 'ImageTooLarge' });
    expect(row.message).toMatch(/urlImages\.maxSizeMiB 1/);
    expect(leftOf(url)).toEqual([]);
  });

  it('refuses a qcow2 image whose header names a backing file: ImageHasBackingFile, nothing written', async () => {
    const url = `${origin.base}/backed.qcow2`;
    const row = await settle(source(url, sha256(backingImage)));
    expect(row).toMatchObject({ ready: false, reason: 'ImageHasBackingFile' });
    expect(row.message).toContain('/dev/sda');
    expect(leftOf(url)).toEqual([]);
  });

  it('refuses an image already in the image directory whose header names a backing file', async () => {
    // Downloaded by a host before these guards: found by its name, checked again before use.
    const url = `${origin.base}/images/earlier.qcow2`;
    writeFileSync(fileOf(url), backingImage);
    try {
      const row = await settle(source(url, sha256(backingImage)));
      expect(row).toMatchObject({ ready: false, reason: 'ImageHasBackingFile' });
      expect(row.message).toContain('/dev/sda');
    } finally {
      rmSync(fileOf(url), { force: true });
    }
  });

  it('takes an http image without a checksum on a lab host that opts in, and still refuses a backing file there', async () => {
    const lab = { allowHttp: true, allowWithoutChecksum: true };
    const url = `${plain.base}/images/lab.raw`;
    expect(await settle(source(url), lab)).toEqual({ ready: true, resolvedRef: fileOf(url) });
    const backed = `${plain.base}/backed.qcow2`;
    expect(await settle(source(backed), lab)).toMatchObject({ ready: false, reason: 'ImageHasBackingFile' });
    expect(leftOf(backed)).toEqual([]);
  });
});
