// The HTTP side of the simulated VMM: the spec's paths under /api/v1, each request
// body validated against the spec before the VM sees it. A request the spec does not
// allow is answered as v53.0 answers it (checked against the real binary: unknown
// path → 404 ["Not Found"], known path with the wrong method → 400 ["Bad Request"],
// an unreadable body → 400 ["Failed to deserialize JSON", …], an empty one → 400 with
// no body) and recorded as a violation: tests read them at GET /_sim/violations and
// in the violations file, and expect none.
//
// Stricter than the real VMM on purpose: v53.0 ignores fields it does not know (serde
// without deny_unknown_fields); here they are refused, so that a misspelt field in a
// request of ours fails a test instead of being dropped in silence.
import { appendFileSync, existsSync, truncateSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { API_ROOT, hasOperation, requestSchemaName, SpecValidator } from '../../fixtures/cloud-hypervisor/openapi.js';
import { SimulatedVm, type Answer } from './vm-state.js';

export interface VmmServerOptions {
  /** Reported by vmm.ping. */
  readonly version: string;
  /** JSON lines, one per violation, appended here as well as kept in memory. */
  readonly violationsFile?: string;
  /** Per-operation delay before answering (`vm.boot` → ms), to test deadlines and cancellation. */
  readonly delaysMs: ReadonlyMap<string, number>;
  /** `acpi`: the guest powers off on vm.power-button; `halt`: it ignores it (like a halting payload). */
  readonly guest: 'acpi' | 'halt';
  /** As `--no-shutdown`: a guest power-off leaves the VMM running (VM shut down, config kept). */
  readonly noShutdown: boolean;
  /** Called after vmm.shutdown was answered, and when the guest powers off without noShutdown. */
  readonly onExit: () => void;
  readonly log: (message: string) => void;
}

export interface Violation {
  readonly method: string;
  readonly path: string;
  readonly problems: readonly string[];
}

type Handler = (vm: SimulatedVm, body: unknown) => Answer;

// The operations the simulator serves, by spec path. Other spec paths are answered
// 500 and recorded: a client calling them needs the simulator extended first.
const HANDLERS: Readonly<Record<string, Handler>> = {
  'PUT /vmm.shutdown': () => ({ status: 200 }),
  'GET /vm.info': (vm) => vm.info(),
  'PUT /vm.create': (vm, body) => vm.create(body as Record<string, unknown>),
  'PUT /vm.boot': (vm) => vm.boot(),
  'PUT /vm.pause': (vm) => vm.pause(),
  'PUT /vm.resume': (vm) => vm.resume(),
  'PUT /vm.shutdown': (vm) => vm.shutdown(),
  'PUT /vm.reboot': (vm) => vm.reboot(),
  'PUT /vm.power-button': (vm) => vm.powerButton(),
  'PUT /vm.delete': (vm) => vm.delete(),
  'PUT /vm.resize': (vm, body) => vm.resize(body as { desired_vcpus?: number }),
  'PUT /vm.resize-disk': (vm, body) => vm.resizeDisk(body as { id?: string }),
};

export function createVmmServer(options: VmmServerOptions): Server {
  const vm = new SimulatedVm({ exists: existsSync, resizeFile: (path, size) => truncateSync(path, size) });
  const validator = new SpecValidator({ closed: true });
  const violations: Violation[] = [];

  function record(method: string, path: string, problems: string[]): void {
    const violation = { method, path, problems };
    violations.push(violation);
    options.log(`Spec violation: ${method} ${path}: ${problems.join('; ')}`);
    if (options.violationsFile) appendFileSync(options.violationsFile, `${JSON.stringify(violation)}\n`);
  }

  function answer(method: string, path: string, body: string): Answer {
    const operation = path.slice(API_ROOT.length);
    if (!path.startsWith(`${API_ROOT}/`) || !hasOperationOnAnyMethod(operation)) {
      record(method, path, ['no such path in the spec']);
      return { status: 404, body: ['Not Found'] };
    }
    if (!hasOperation(method, operation)) {
      record(method, path, [`the spec has no ${method} on ${operation}`]);
      return { status: 400, body: ['Bad Request'] };
    }
    if (operation === '/vmm.ping')
      return { status: 200, body: { build_version: `v${options.version}`, version: options.version, pid: process.pid, features: ['io_uring', 'kvm'] } };
    const schema = requestSchemaName(method, operation);
    let parsed: unknown;
    if (schema === undefined) {
      if (body !== '') record(method, path, ['a body where the spec takes none']);
    } else {
      if (body === '') {
        record(method, path, ['no body where the spec requires one']);
        return { status: 400 };
      }
      try {
        parsed = JSON.parse(body);
      } catch (error) {
        record(method, path, [`not JSON: ${(error as Error).message}`]);
        return { status: 400, body: ['Failed to deserialize JSON', (error as Error).message] };
      }
      const problems = validator.errors(schema, parsed);
      if (problems.length > 0) {
        record(method, path, problems);
        return { status: 400, body: ['Failed to deserialize JSON', ...problems] };
      }
    }
    const handler = HANDLERS[`${method} ${operation}`];
    if (!handler) {
      record(method, path, ['not simulated']);
      return { status: 500, body: ['Error from API', `${operation} is not simulated`] };
    }
    return handler(vm, parsed);
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? '';
    const path = req.url ?? '';
    const body = await readBody(req);
    if (path === '/_sim/violations' && method === 'GET') return send(res, { status: 200, body: violations });
    if (method !== 'GET' && method !== 'PUT') {
      // micro_http's own refusal (checked with POST against v53.0), outside the API's JSON chains.
      record(method, path, [`method ${method}`]);
      return send(res, { status: 400, body: { error: 'Invalid HTTP Method: Unsupported HTTP method.\nAll previous unanswered requests will be dropped.' } });
    }
    const result = answer(method, path, body);
    const label = path.slice(API_ROOT.length + 1);
    const wait = options.delaysMs.get(label);
    if (wait !== undefined) await delay(wait);
    options.log(`${method} ${path} → ${result.status}`);
    if (label === 'vmm.shutdown' && result.status === 200) {
      // v53.0 answers 200 with an empty JSON body (the spec says 204), then exits.
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 0 }).end(() => options.onExit());
      return;
    }
    send(res, result);
    if (label === 'vm.power-button' && result.status === 204 && options.guest === 'acpi' && vm.state === 'Running') guestPowersOff();
  }

  // The guest answers the power button by powering off (ACPI S5). Checked with a payload
  // writing S5 to the ACPI shutdown port: v53.0 exits (status 0) and removes its socket;
  // with --no-shutdown it stays, and vm.info then reports state Created.
  function guestPowersOff(): void {
    setImmediate(() => {
      vm.shutdown();
      options.log('Guest powered off');
      if (!options.noShutdown) options.onExit();
    });
  }

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      options.log(`Internal error: ${String(error)}`);
      if (!res.headersSent) send(res, { status: 500, body: ['simulator error', String(error)] });
    });
  });
  return server;
}

function hasOperationOnAnyMethod(operation: string): boolean {
  return hasOperation('get', operation) || hasOperation('put', operation);
}

function send(res: ServerResponse, result: Answer): void {
  const headers: Record<string, string | number> = { Server: 'Cloud Hypervisor API' };
  if (result.body === undefined) {
    if (result.status !== 204) headers['Content-Length'] = 0;
    res.writeHead(result.status, headers).end();
    return;
  }
  const text = JSON.stringify(result.body);
  res.writeHead(result.status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
