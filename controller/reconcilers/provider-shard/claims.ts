// Where a provider role shard's claim on a Provider is kept (ADR 33): the annotation
// banlieue.io/provider-shard, whose value is the shard's Lease name, written by a merge patch
// preconditioned on the resourceVersion read.
import { ProviderKind, type Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { apiVersionOf } from '../../../infra/api/kind.js';
import { Annotation } from '../../../infra/api/well-known.js';
import type { Informer } from '../../runtime/informer.js';
import type { KubeApi } from '../../runtime/kube-api.js';
import { labelValue } from '../../scheduler/label-selector.js';
import { isLostClaimWrite, type ClaimRecords } from '../shard-claim/reconciler.js';

/** The shard holding a Provider's claim, if any. */
export function shardOf(provider: Provider): string | undefined {
  return labelValue(provider.metadata.annotations, Annotation.providerShard);
}

export class ProviderClaims implements ClaimRecords<Provider> {
  readonly apiVersion = apiVersionOf(ProviderKind);
  readonly kind = ProviderKind.kind;

  constructor(
    private readonly providers: Informer<Provider>,
    private readonly api: KubeApi,
  ) {}

  get(key: string): Provider | undefined {
    return this.providers.get(key);
  }

  holder(provider: Provider): string | undefined {
    return shardOf(provider);
  }

  async write(provider: Provider, shard: string | null): Promise<boolean> {
    const patch = { metadata: { resourceVersion: provider.metadata.resourceVersion, annotations: { [Annotation.providerShard]: shard } } };
    try {
      await this.api.request('PATCH', await this.api.pathOf(provider), { body: patch, contentType: 'application/merge-patch+json' });
      return true;
    } catch (err) {
      if (isLostClaimWrite(err)) return false;
      throw err;
    }
  }
}
