// CAPI's own admission and conversion webhooks for the CAPI manager the local
// contract e2e runs outside any cluster. CAPI's release reaches them through
// Service capi-system/capi-webhook-service with a CA cert-manager injects; here
// the API server calls the manager's webhook server on loopback by URL and
// trusts the self-signed certificate it serves (test/tools/README.md, "Cluster
// API manifests"). So defaulting, validation (ClusterClass and topology rules
// included) and v1beta1 <-> v1beta2 conversion are CAPI's, not the test's.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { INFRA_GROUP } from '../../infra/api/kind.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Where the API server reaches the manager's webhook server, and what it trusts there. */
export interface WebhookEndpoint {
  /** `https://127.0.0.1:<--webhook-port>`. */
  readonly baseUrl: string;
  /** Base64 PEM of the certificate the webhook server serves (self-signed: it is its own CA). */
  readonly caBundle: string;
  /** The manager's `--webhook-cert-dir`: tls.crt and tls.key. */
  readonly certDir: string;
}

/**
 * A self-signed serving certificate for 127.0.0.1 and localhost in
 * `<dir>/capi-webhook-certs`, the webhook server's `port`. Node's crypto cannot
 * write an X.509 certificate; openssl can.
 */
export async function createWebhookEndpoint(dir: string, port: number): Promise<WebhookEndpoint> {
  const certDir = join(dir, 'capi-webhook-certs');
  mkdirSync(certDir, { recursive: true });
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=capi-webhook-service',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    join(certDir, 'tls.key'),
    '-out',
    join(certDir, 'tls.crt'),
  ]);
  return { baseUrl: `https://127.0.0.1:${port}`, caBundle: readFileSync(join(certDir, 'tls.crt')).toString('base64'), certDir };
}

function readYaml(path: string): Json[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((d) => d.toJS() as Json | null)
    .filter((d): d is Json => d !== null);
}

/** A `clientConfig` naming CAPI's webhook Service, rewritten to the loopback URL of the same path. */
function byUrl(clientConfig: { service?: { path?: string } }, endpoint: WebhookEndpoint): Json {
  const path = clientConfig.service?.path;
  if (!path) throw new Error(`CAPI webhook clientConfig without a service path: ${JSON.stringify(clientConfig)}`);
  return { url: `${endpoint.baseUrl}${path}`, caBundle: endpoint.caBundle };
}

/**
 * CAPI's CRDs (core/config/crd/bases) with the conversion webhook CAPI's
 * kustomization patches in (core/config/crd/patches/webhook_in_*.yaml), by
 * URL. Without it the API server would answer v1beta1 reads with stored
 * v1beta2 objects relabelled, not converted.
 */
export function capiCrdsWithConversion(moduleDir: string, endpoint: WebhookEndpoint): string {
  const conversions = new Map<string, Json>();
  const patches = join(moduleDir, 'core/config/crd/patches');
  for (const file of readdirSync(patches).filter((f) => f.startsWith('webhook_in_'))) {
    for (const patch of readYaml(join(patches, file))) {
      const conversion = patch.spec.conversion as Json;
      conversions.set(patch.metadata.name as string, {
        ...conversion,
        webhook: { ...conversion.webhook, clientConfig: byUrl(conversion.webhook.clientConfig, endpoint) },
      });
    }
  }
  const bases = join(moduleDir, 'core/config/crd/bases');
  const crds = readdirSync(bases)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => readYaml(join(bases, f)));
  for (const crd of crds) {
    const conversion = conversions.get(crd.metadata.name as string);
    if (conversion) crd.spec.conversion = conversion;
  }
  return crds.map((d) => stringify(d)).join('---\n');
}

/**
 * CAPI's MutatingWebhookConfiguration and ValidatingWebhookConfiguration
 * (core/config/webhook/manifests.yaml), named as its release names them, each
 * webhook called by URL.
 */
export function capiWebhookConfigurations(moduleDir: string, endpoint: WebhookEndpoint): string {
  const configurations = readYaml(join(moduleDir, 'core/config/webhook/manifests.yaml'));
  if (configurations.length !== 2) throw new Error('CAPI webhook configurations not found in the module cache');
  for (const configuration of configurations) {
    configuration.metadata = { name: `capi-${configuration.metadata.name as string}` };
    for (const webhook of configuration.webhooks as Json[]) webhook.clientConfig = byUrl(webhook.clientConfig, endpoint);
  }
  return configurations.map((d) => stringify(d)).join('---\n');
}

/** A Machine CAPI's validating webhook refuses (the schema alone accepts it). */
export function machineWithInvalidVersion(ns: string, name: string): Json {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: ns },
    spec: {
      clusterName: 'none',
      version: 'not-a-version',
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'VSphereMachine', name },
    },
  };
}

/**
 * Resolves once the API server calls CAPI's webhooks: it picks registrations up
 * asynchronously, so a dry run of a Machine only the webhook refuses is
 * retried until the webhook's answer comes back.
 */
export async function waitForCapiWebhooks(kubectl: (args: string[], input?: string) => Promise<string>): Promise<void> {
  const probe = JSON.stringify(machineWithInvalidVersion('default', 'webhook-probe'));
  await waitFor(
    "the API server to call CAPI's webhooks",
    async () => {
      const refusal = await kubectl(['create', '--dry-run=server', '-f', '-'], probe).then(
        () => undefined,
        (err: Error) => err.message,
      );
      if (refusal === undefined) return undefined;
      // Only CAPI's validating webhook says this (its defaulting one added the "v").
      if (/spec\.version: Invalid value: "vnot-a-version": must be a valid semantic version/.test(refusal)) return true;
      throw new Error(refusal);
    },
    120_000,
  );
}
