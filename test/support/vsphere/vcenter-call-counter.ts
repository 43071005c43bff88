// A TLS proxy on loopback in front of vcsim that counts each request by its
// User-Agent and by method (the SOAP body's method, or the REST path), so that
// a bench can say how many vCenter calls each client made. Clients that are
// measured are pointed at the proxy; the harness's own client talks to vcsim
// directly, and anything else shows up under its own User-Agent.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, Agent, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Vcsim } from '../../peers/vsphere/vcsim.js';
import { makeServingFiles } from '../test-pki.js';
import type { VcenterEndpoint } from './world.js';

/** Calls by User-Agent, then by method (`RetrievePropertiesEx`, `POST /rest/com/vmware/cis/session`). */
export type CallCounts = Record<string, Record<string, number>>;

export interface VcenterCallCounter {
  /** vcsim as seen through the proxy: its URL and CA are the proxy's, its credentials vcsim's. */
  readonly vcenter: VcenterEndpoint;
  /** The SHA-1 thumbprint of the proxy's certificate, as a vSphere client pins it (`AA:BB:…`). */
  readonly thumbprint: string;
  /** A copy of the counts so far. */
  counts(): CallCounts;
  stop(): Promise<void>;
}

/** The method a SOAP request calls: the first element of its Body. */
const SOAP_METHOD = /<(?:[\w-]+:)?Body[^>]*>\s*<(?:[\w-]+:)?([A-Za-z_]\w*)/;
/** Object ids in REST paths (UUIDs, morefs, numbers), so that one kind of call is one row. */
const REST_ID = /\/(?:[0-9a-f]{8}-[0-9a-f-]{27}|[a-z]+-\d+|\d+)(?=\/|$)/gi;

function methodOf(req: IncomingMessage, body: Buffer): string {
  const path = (req.url ?? '').split('?')[0] ?? '';
  if (path === '/sdk' || path.startsWith('/sdk/')) return SOAP_METHOD.exec(body.toString('utf8'))?.[1] ?? `${req.method ?? '?'} ${path}`;
  return `${req.method ?? '?'} ${path.replace(REST_ID, '/{id}')}`;
}

export async function startVcenterCallCounter(vcsim: Vcsim): Promise<VcenterCallCounter> {
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-vcenter-counter-'));
  const tls = await makeServingFiles(dir, 'banlieue-vcenter-counter-ca');
  const upstream = new URL(vcsim.url);
  const agent = new Agent({ keepAlive: true, ca: vcsim.caPem });
  const calls: CallCounts = {};

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const agentName = req.headers['user-agent'] ?? '(none)';
      const byMethod = (calls[agentName] ??= {});
      const method = methodOf(req, body);
      byMethod[method] = (byMethod[method] ?? 0) + 1;
      const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
      const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(String(err));
      });
      out.end(body);
    });
  };

  const server: Server = createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile), keepAliveTimeout: 60_000 }, forward);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    vcenter: { url: `https://127.0.0.1:${port}${upstream.pathname}`, username: vcsim.username, password: vcsim.password, caPem: tls.caPem },
    thumbprint: new X509Certificate(readFileSync(tls.certFile)).fingerprint,
    counts: () => structuredClone(calls),
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The calls made between two readings of counts(), by User-Agent and method. */
export function callsSince(before: CallCounts, after: CallCounts): CallCounts {
  const since: CallCounts = {};
  for (const [agent, byMethod] of Object.entries(after)) {
    for (const [method, n] of Object.entries(byMethod)) {
      const d = n - (before[agent]?.[method] ?? 0);
      if (d !== 0) (since[agent] ??= {})[method] = d;
    }
  }
  return since;
}
