// `banlieue validate` gives the API server's verdict. A generated corpus of
// malformed objects over every kind (test/support/hostile-corpus.ts) goes
// through the real kube-apiserver (dry-run creates, fieldValidation=Strict, as
// kubectl apply) and through the offline checks; the verdicts must agree, and
// every refusal must name the field.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kindByName } from '../../infra/api/kinds.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { verdictsOf } from '../../controller/cli/validate.js';
import type { InputDocument } from '../../controller/cli/validate/input-document.js';
import { OfflineChecker } from '../../controller/cli/validate/offline-checker.js';
import { ServerChecker } from '../../controller/cli/validate/server-checker.js';
import type { Verdict } from '../../controller/cli/validate/verdict.js';
import { hostileCorpus, type CorpusCase } from '../support/hostile-corpus.js';
import { createNamespace, testKubeConfig } from '../support/kube.js';

interface Judged {
  readonly description: string;
  readonly offline: Verdict;
  readonly server: Verdict;
}

const summary = (v: Verdict): string => (v.ok ? 'accepted' : `refused (${v.errors.map((e) => `${e.field}: ${e.message.slice(0, 160)}`).join('; ')})`);

/** Dry runs a few at a time: the machine is shared, the API server is local. */
async function inBatches<T, R>(items: readonly T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return out;
}

describe('banlieue validate agrees with the API server', () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  let judged: Judged[] = [];

  const place = (c: CorpusCase, index: number): InputDocument => {
    const object = structuredClone(c.object);
    const namespaced = (() => {
      try {
        return kindByName(object.kind).scope === 'Namespaced';
      } catch {
        return true;
      }
    })();
    if (namespaced && object.metadata && typeof object.metadata === 'object') object.metadata.namespace = ns.name;
    return { file: 'corpus', index, object };
  };

  beforeAll(async () => {
    ns = await createNamespace('validate');
    const docs = hostileCorpus().map(place);
    const offline = new OfflineChecker();
    const server = new ServerChecker(new KubeApi(testKubeConfig()), ns.name);
    const corpus = hostileCorpus();
    judged = await inBatches(docs, 8, async (doc) => {
      const [o, s] = [offline.check(doc), await server.check(doc)];
      if (!o || !s) throw new Error(`corpus object ${doc.index} was not judged: ${corpus[doc.index]?.description ?? ''}`);
      return { description: corpus[doc.index]?.description ?? '', offline: o, server: s };
    });
  }, 900_000);
  afterAll(async () => {
    await ns.remove();
  });

  it('runs at least 500 generated objects over every kind, valid ones among them', () => {
    expect(judged.length).toBeGreaterThanOrEqual(500);
    expect(judged.filter((j) => j.server.ok).length).toBeGreaterThan(0);
    expect(judged.filter((j) => !j.server.ok).length).toBeGreaterThan(500);
  });

  it('never refuses offline what the API server accepts', () => {
    const wronglyRefused = judged.filter((j) => !j.offline.ok && j.server.ok).map((j) => `${j.description}: offline ${summary(j.offline)}`);
    expect(wronglyRefused).toEqual([]);
  });

  it('refuses offline what the API server refuses, unless only CEL rules (reported as not checked) could tell', () => {
    const missed = judged
      .filter((j) => j.offline.ok && !j.server.ok && j.offline.notCheckedOffline.length === 0)
      .map((j) => `${j.description}: server ${summary(j.server)}`);
    expect(missed).toEqual([]);
  });

  it('names the field in every refusal, offline and from the API server', () => {
    const unnamed = judged.flatMap((j) => [
      ...(j.offline.errors.some((e) => e.field !== '') || j.offline.ok ? [] : [`${j.description}: offline ${summary(j.offline)}`]),
      ...(j.server.errors.some((e) => e.field !== '') || j.server.ok ? [] : [`${j.description}: server ${summary(j.server)}`]),
    ]);
    expect(unnamed).toEqual([]);
  });

  it('refuses common mistakes (typo, kind, version, name; an http endpoint with --server)', async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const vm = (change: (o: Record<string, any>) => void): Record<string, unknown> => {
      const o = {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VirtualMachine',
        metadata: { name: 'web-1', namespace: ns.name },
        spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' } },
      };
      change(o);
      return o;
    };
    const provider = {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'vc', namespace: ns.name },
      spec: { providerClassRef: { name: 'vsphere' }, connection: { endpoint: 'http://vc.example.com/sdk' } },
    };
    const cases = [
      vm((o) => (o.spec.classRefs = { name: 'x' })),
      vm((o) => (o.kind = 'VirtualMashine')),
      vm((o) => (o.apiVersion = 'banlieue.io/v1beta1')),
      vm((o) => (o.metadata.name = 'Web_1')),
    ];
    const docs = (objects: unknown[]): InputDocument[] => objects.map((object, index) => ({ file: 'mistakes.yaml', index, object }));
    const offline = await verdictsOf(docs([...cases, provider]), {});
    expect(offline.map((v) => v.ok)).toEqual([false, false, false, false, true]);
    expect(offline[4]?.notCheckedOffline.length, 'the Provider CEL rules are reported as not checked').toBeGreaterThan(0);
    // --server: the API server's own verdict, through the kubeconfig as the CLI loads it.
    const server = await verdictsOf(docs([...cases, provider]), { server: true, kubeconfig: inject('kubeconfig'), namespace: ns.name });
    expect(server.map((v) => v.ok)).toEqual([false, false, false, false, false]);
    expect(server[4]?.errors.map((e) => e.field)).toContain('spec.connection.endpoint');
  });
});
