// A server a tenant would run to receive banlieue's credentials: HTTPS on
// loopback with its own CA, recording every TCP connection and every request
// (method, path, headers, body) it gets. Tests assert it got nothing, so it
// answers nothing useful.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeServingFiles } from './test-pki.js';

export interface CapturedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface CaptureEndpoint {
  /** `https://127.0.0.1:<port>/sdk`, where a vSphere client would post its Login. */
  readonly url: string;
  readonly port: number;
  /** PEM of the CA that signed its certificate (to trust it without insecureSkipTLSVerify). */
  readonly caPem: string;
  /** TCP connections accepted, TLS completed or not. */
  connections(): number;
  requests(): readonly CapturedRequest[];
  /** Everything received, as one text to search. */
  received(): string;
  stop(): Promise<void>;
}

export async function startCaptureEndpoint(): Promise<CaptureEndpoint> {
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-capture-'));
  const tls = await makeServingFiles(dir, 'tenant-endpoint-ca');
  const requests: CapturedRequest[] = [];
  let connections = 0;
  const server: Server = createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(500, { 'content-type': 'text/plain' }).end('captured');
    });
  });
  server.on('connection', () => (connections += 1));
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (typeof address === 'object' && address) resolve(address.port);
      else reject(new Error('the capture endpoint has no port'));
    });
  });
  return {
    url: `https://127.0.0.1:${port}/sdk`,
    port,
    caPem: tls.caPem,
    connections: () => connections,
    requests: () => requests,
    received: () => requests.map((r) => `${r.method} ${r.url}\n${JSON.stringify(r.headers)}\n${r.body}`).join('\n'),
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
