// A Proxmox VE API simulator for tests, held to PVE's own API schema
// (test/support/proxmox/apidata.ts): every request's path, method and
// parameters are checked as PVE checks them and refused with PVE's 400 and
// `errors` body; every answer is checked against the call's `returns`. It
// serves HTTPS on 127.0.0.1 with a CA made per start, authenticates API
// tokens, enforces the schema's permission checks, and keeps a cluster (nodes,
// storages, bridges, VMs, tasks) that tests shape and inspect. Requests and
// schema violations are recorded for assertions; a path the schema has but
// the simulator does not answers 501 (not a violation).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadPveApiSchema, type HttpMethod, type PveApiSchema } from '../../support/proxmox/apidata.js';
import { makeServingCertificate } from '../../support/test-pki.js';
import { checkObject, checkValue, type Errors } from './pve-validate.js';
import { clusterRoutes } from './sim-cluster-handlers.js';
import { PveHttpError } from './sim-errors.js';
import type { HandlerContext, Routes, SimBehaviour } from './sim-handler.js';
import { readRequest } from './sim-http.js';
import { ALL_PRIVILEGES, checkPermissions, type SimToken } from './sim-permissions.js';
import { qemuRoutes } from './sim-qemu-handlers.js';
import { SimState, type AddVmSpec, type SimBridge, type SimStorage } from './sim-state.js';
import { storageRoutes } from './sim-storage-handlers.js';
import { SimTasks, type TaskFailure } from './sim-tasks.js';

export interface ProxmoxSimOptions {
  /** Node names. @default ['pve1', 'pve2', 'pve3'] */
  readonly nodes?: readonly string[];
  /** @default local (dir: iso, vztmpl, snippets, backup), local-lvm (lvmthin: images), ceph (rbd, shared: images), all 1 TiB */
  readonly storages?: readonly SimStorage[];
  /** @default vmbr0 (VLAN-aware) and vmbr1 on every node */
  readonly bridges?: readonly SimBridge[];
  /** @default template 9000 `ubuntu-2404` on pve1/local-lvm, template 9001 `ubuntu-2404-shared` on pve1/ceph */
  readonly vms?: readonly AddVmSpec[];
  /** @default one token, `banlieue@pve!provider`, holding ALL_PRIVILEGES on `/` */
  readonly tokens?: readonly SimToken[];
  /** How long a task runs, in all or per task type (`qmclone`…; `default` for the others). @default 20 */
  readonly taskDelayMs?: number | Readonly<Record<string, number>>;
  /** How long after start a VM's guest agent answers. @default 0 */
  readonly agentDelayMs?: number;
  /** @default 'banlieue-sim' */
  readonly clusterName?: string;
}

export interface RecordedRequest {
  readonly method: string;
  /** The concrete path below /api2/json. */
  readonly path: string;
  /** The schema's template, when the path is one. */
  readonly template: string | undefined;
  /** As sent (strings), path parameters included. */
  readonly params: Readonly<Record<string, string | readonly string[]>>;
  readonly status: number;
  readonly tokenID: string | undefined;
}

export interface Violation {
  /** request: the schema refuses it; path: no such path or method; answer: the simulator answered off-schema; simulator: it crashed. */
  readonly kind: 'request' | 'path' | 'answer' | 'simulator';
  readonly call: string;
  readonly errors: Readonly<Errors>;
}

/** A fault to answer instead of the real one (e.g. 503 twice, to see the client retry). */
export interface InjectedFault {
  readonly status: number;
  readonly reason?: string;
  /** `GET /version`-style template to match; every call when omitted. */
  readonly call?: string;
  /** How many calls get it. @default 1 */
  readonly times?: number;
}

export interface ProxmoxSim {
  /** `https://127.0.0.1:<port>` (the client appends /api2/json). */
  readonly url: string;
  readonly caPem: string;
  /** The default token's credentials. */
  readonly token: { readonly tokenID: string; readonly tokenSecret: string };
  readonly state: SimState;
  readonly tasks: SimTasks;
  readonly requests: readonly RecordedRequest[];
  readonly violations: readonly Violation[];
  addToken(token: SimToken): void;
  injectFault(fault: InjectedFault): void;
  failNextTask(failure: TaskFailure): void;
  /** Forgets recorded requests and violations. */
  clearRecords(): void;
  /**
   * Holds every request unanswered until resume(), as a frozen or cut-off
   * pveproxy would (connections accepted, no answer); running tasks still end.
   */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const ROUTES: Routes = { ...clusterRoutes, ...storageRoutes, ...qemuRoutes };
const GIB = 1024 ** 3;
const DEFAULT_TOKEN: SimToken = { tokenID: 'banlieue@pve!provider', secret: 'c0ffee00-0000-4000-8000-000000000001', privileges: { '/': ALL_PRIVILEGES } };

export async function startProxmoxSim(options: ProxmoxSimOptions = {}): Promise<ProxmoxSim> {
  const schema = loadPveApiSchema();
  const tls = await makeServingCertificate('banlieue-proxmox-sim-ca');
  const state = buildState(options);
  const delay = options.taskDelayMs ?? 20;
  const tasks = new SimTasks((type) => (typeof delay === 'number' ? delay : (delay[type] ?? delay.default ?? 20)));
  const behaviour: SimBehaviour = { agentDelayMs: options.agentDelayMs ?? 0 };
  const tokens = new Map((options.tokens ?? [DEFAULT_TOKEN]).map((t) => [t.tokenID, t]));
  const records = { requests: [] as RecordedRequest[], violations: [] as Violation[], faults: [] as { fault: InjectedFault; left: number }[] };

  const gate = new RequestGate();
  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
    gate
      .passed()
      .then(() => handle(req, res, { schema, state, tasks, behaviour, tokens, records }))
      .catch((error: unknown) => {
        records.violations.push({ kind: 'simulator', call: `${req.method ?? ''} ${req.url ?? ''}`, errors: { '': String(error) } });
        if (!res.headersSent) send(res, 500, 'simulator error', { data: null });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const first = [...tokens.values()][0] ?? DEFAULT_TOKEN;
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: tls.caPem,
    token: { tokenID: first.tokenID, tokenSecret: first.secret },
    state,
    tasks,
    get requests() {
      return records.requests;
    },
    get violations() {
      return records.violations;
    },
    addToken: (token) => void tokens.set(token.tokenID, token),
    injectFault: (fault) => void records.faults.push({ fault, left: fault.times ?? 1 }),
    failNextTask: (failure) => tasks.failNext(failure),
    clearRecords() {
      records.requests.length = 0;
      records.violations.length = 0;
    },
    pause: () => gate.close(),
    resume: () => gate.open(),
    async stop() {
      gate.open();
      tasks.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Requests pass when open; while closed they wait for it to open again. */
class RequestGate {
  private closed: { promise: Promise<void>; open: () => void } | undefined;

  passed(): Promise<void> {
    return this.closed?.promise ?? Promise.resolve();
  }

  close(): void {
    if (this.closed) return;
    let open = (): void => undefined;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.closed = { promise, open };
  }

  open(): void {
    this.closed?.open();
    this.closed = undefined;
  }
}

interface Context {
  readonly schema: PveApiSchema;
  readonly state: SimState;
  readonly tasks: SimTasks;
  readonly behaviour: SimBehaviour;
  readonly tokens: ReadonlyMap<string, SimToken>;
  readonly records: { requests: RecordedRequest[]; violations: Violation[]; faults: { fault: InjectedFault; left: number }[] };
}

async function handle(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> {
  const url = new URL(req.url ?? '/', 'https://127.0.0.1');
  const method = (req.method ?? 'GET') as HttpMethod;
  const path = url.pathname.replace(/^\/api2\/json/, '') || '/';
  const parsed = await readRequest(req, url);
  const matched = url.pathname.startsWith('/api2/json/') ? ctx.schema.match(path) : undefined;
  const template = matched?.path.template;
  const call = `${method} ${template ?? path}`;
  const token = authenticate(req.headers.authorization, ctx.tokens);
  const record = (status: number): void =>
    void ctx.records.requests.push({ method, path, template, params: { ...matched?.pathParams, ...parsed.params }, status, tokenID: token?.tokenID });
  const reply = (status: number, reason: string, body: unknown): void => {
    record(status);
    send(res, status, reason, body);
  };

  // pveproxy authenticates first (and waits 3 s before a 401, which the simulator does not).
  if (!token) return reply(401, req.headers.authorization ? 'authentication failure' : 'No ticket', undefined);
  const fault = ctx.records.faults.find((f) => f.left > 0 && (f.fault.call === undefined || f.fault.call === call));
  if (fault) {
    fault.left -= 1;
    return reply(fault.fault.status, fault.fault.reason ?? 'injected fault', { data: null });
  }
  const info = template ? ctx.schema.method(template, method) : undefined;
  if (!matched || !info) {
    ctx.records.violations.push({ kind: 'path', call, errors: { path: `no ${method} ${path} in the schema` } });
    return reply(501, `Method '${method} /api2/json${path}' not implemented`, { data: null });
  }
  const checked = checkObject({ ...parsed.params, ...matched.pathParams }, info.parameters, 'form');
  if (Object.keys(checked.errors).length > 0) {
    ctx.records.violations.push({ kind: 'request', call, errors: checked.errors });
    return reply(400, 'Parameter verification failed.', { data: null, errors: checked.errors });
  }
  try {
    if (info.allowtoken !== 1) throw new PveHttpError(403, 'API tokens are not allowed for this call');
    checkPermissions(info, token, checked.value);
    const handler = ROUTES[call];
    if (!handler) return reply(501, `simulator: ${call} is in the schema but not simulated`, { data: null });
    const context: HandlerContext = {
      params: checked.value,
      user: token.tokenID,
      state: ctx.state,
      tasks: ctx.tasks,
      behaviour: ctx.behaviour,
      ...(parsed.file ? { file: parsed.file } : {}),
    };
    const data = handler(context) ?? null;
    const answerErrors = checkValue(data, info.returns, 'json');
    if (Object.keys(answerErrors).length > 0) ctx.records.violations.push({ kind: 'answer', call, errors: answerErrors });
    return reply(200, 'OK', { data });
  } catch (error) {
    if (!(error instanceof PveHttpError)) throw error;
    return reply(error.status, error.message, { data: null, ...(error.errors ? { errors: error.errors } : {}) });
  }
}

/** `PVEAPIToken=USER@REALM!TOKENID=SECRET` → the token, when the secret is right. */
function authenticate(header: string | undefined, tokens: ReadonlyMap<string, SimToken>): SimToken | undefined {
  const match = /^PVEAPIToken=([^=\s]+)=(.+)$/.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const token = tokens.get(match[1]);
  return token && token.secret === match[2] ? token : undefined;
}

function send(res: ServerResponse, status: number, reason: string, body: unknown): void {
  // The status line carries PVE's message: one line of printable ASCII.
  const phrase = reason.replace(/[^\x20-\x7e]+/g, ' ').trim();
  const payload = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, phrase, { 'Content-Type': 'application/json;charset=UTF-8', 'Content-Length': Buffer.byteLength(payload) });
  res.end(payload);
}

function buildState(options: ProxmoxSimOptions): SimState {
  const state = new SimState(options.clusterName ?? 'banlieue-sim');
  (options.nodes ?? ['pve1', 'pve2', 'pve3']).forEach((name, i) =>
    state.nodes.set(name, { name, online: true, cpus: 16, memoryBytes: 64 * GIB, ip: `192.0.2.${11 + i}` }),
  );
  const storages = options.storages ?? [
    { id: 'local', type: 'dir', content: ['iso', 'vztmpl', 'snippets', 'backup'], shared: false, totalBytes: 1024 * GIB, enabled: true },
    { id: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'], shared: false, totalBytes: 1024 * GIB, enabled: true },
    { id: 'ceph', type: 'rbd', content: ['images'], shared: true, totalBytes: 1024 * GIB, enabled: true },
  ];
  for (const storage of storages) state.storages.set(storage.id, { ...storage });
  const bridges =
    options.bridges ??
    [...state.nodes.keys()].flatMap((node) => [
      { node, iface: 'vmbr0', vlanAware: true },
      { node, iface: 'vmbr1', vlanAware: false },
    ]);
  state.bridges.push(...bridges);
  const vms = options.vms ?? [
    { vmid: 9000, node: 'pve1', name: 'ubuntu-2404', template: true, storage: 'local-lvm' },
    { vmid: 9001, node: 'pve1', name: 'ubuntu-2404-shared', template: true, storage: 'ceph' },
  ];
  for (const vm of vms) state.addVm(vm);
  return state;
}
