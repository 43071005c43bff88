// `banlieue validate [PATH...]`: the verdict the API server would give on
// banlieue objects, offline (schema, names, kinds, unknown fields; CEL rules
// reported as not checked) or from the server itself (--server, a dry run).
import { KubeApi } from '../runtime/kube-api.js';
import { loadKubeConfig, namespaceOf } from '../runtime/kube-config.js';
import { CliError } from './cli-error.js';
import type { CelEngine } from './validate/cel-rules.js';
import type { InputDocument } from './validate/input-document.js';
import { OfflineChecker } from './validate/offline-checker.js';
import { readDocuments } from './validate/read-documents.js';
import { ServerChecker } from './validate/server-checker.js';
import type { Verdict } from './validate/verdict.js';

export type ValidateOutput = 'text' | 'json';

export interface ValidateOptions {
  /** @default 'text' */
  readonly output?: ValidateOutput;
  /** Ask the API server (dry run) instead of checking offline. @default false */
  readonly server?: boolean;
  /** kubeconfig for --server. @default KUBECONFIG, ~/.kube/config, in-cluster */
  readonly kubeconfig?: string;
  /** Its context. @default the current one */
  readonly context?: string;
  /** Namespace of namespaced objects that name none, for --server. @default the context's, else "default" */
  readonly namespace?: string;
  /** Evaluates CEL rules offline when given (see cel-rules.ts). @default none: rules are reported as not checked */
  readonly cel?: CelEngine;
}

export interface ValidateIo {
  readonly print: (line: string) => void;
  readonly readStdin: () => Promise<string>;
}

/** Verdicts on `docs`, from the API server or offline; objects of other API groups are left out. */
export async function verdictsOf(docs: readonly InputDocument[], options: ValidateOptions): Promise<Verdict[]> {
  if (!options.server) {
    const checker = new OfflineChecker(undefined, options.cel);
    return docs.map((d) => checker.check(d)).filter((v): v is Verdict => v !== undefined);
  }
  const kc = loadKubeConfig(options.kubeconfig, options.context);
  const namespace = options.namespace ?? namespaceOf(kc);
  const checker = new ServerChecker(new KubeApi(kc, { userAgent: 'banlieue-validate' }), namespace);
  const verdicts: Verdict[] = [];
  for (const doc of docs) {
    const v = await checker.check(doc);
    if (v) verdicts.push(v);
  }
  return verdicts;
}

function where(v: Verdict): string {
  return `${v.file}#${v.index}: ${v.kind || '(no kind)'} ${v.name || '(unnamed)'}`;
}

function printText(verdicts: readonly Verdict[], print: (line: string) => void): void {
  for (const v of verdicts) {
    for (const e of v.errors) print(`${where(v)}: ${e.field ? `${e.field}: ` : ''}${e.message}`);
    if (v.notCheckedOffline.length > 0) {
      print(`${where(v)}: ${v.notCheckedOffline.length} CEL rule(s) not checked offline (run with --server to check them)`);
    }
  }
  const unchecked = verdicts.filter((v) => v.ok && v.notCheckedOffline.length > 0).length;
  const valid = verdicts.filter((v) => v.ok).length;
  const counted = valid === verdicts.length ? `${valid} objects valid` : `${valid} of ${verdicts.length} objects valid`;
  print(`${counted}${unchecked > 0 ? ` (${unchecked} with CEL rules not checked offline)` : ''}`);
}

export async function validateCommand(paths: readonly string[], options: ValidateOptions, io: ValidateIo): Promise<void> {
  const verdicts = await verdictsOf(await readDocuments(paths, io.readStdin), options);
  if (options.output === 'json') io.print(JSON.stringify(verdicts, null, 2));
  else printText(verdicts, io.print);
  const invalid = verdicts.filter((v) => !v.ok).length;
  if (invalid > 0) throw new CliError(`${invalid} of ${verdicts.length} objects are invalid`);
}
