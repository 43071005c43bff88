// The real API client with a tally of its writes: every POST, PUT, PATCH and
// DELETE it sends, by path, with the API server's answer. Tests hand it to a
// reconciler in place of the one a role makes, and count what one pass wrote
// (its status writes among them) against the real kube-apiserver.
import { ApiStatusError, KubeApi, type RequestOptionsExtra } from '../../controller/runtime/kube-api.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** One write as the API server answered it. */
export interface ApiWrite {
  readonly method: string;
  /** The REST path, e.g. /apis/banlieue.io/v1alpha1/namespaces/ns/providers/lab/status. */
  readonly path: string;
  /** Whether the server took it (a 2xx answer). */
  readonly accepted: boolean;
  /** The HTTP code of a refusal; absent when accepted or when no answer came. */
  readonly code?: number;
}

export class CountingKubeApi extends KubeApi {
  private tally: ApiWrite[] = [];

  override async request<T>(method: string, path: string, opts: RequestOptionsExtra = {}): Promise<T> {
    if (!WRITE_METHODS.has(method)) return super.request<T>(method, path, opts);
    try {
      const answer = await super.request<T>(method, path, opts);
      this.tally.push({ method, path, accepted: true });
      return answer;
    } catch (err) {
      this.tally.push({ method, path, accepted: false, ...(err instanceof ApiStatusError ? { code: err.code } : {}) });
      throw err;
    }
  }

  /** The writes answered since the last call, in the order their answers came. */
  take(): ApiWrite[] {
    const taken = this.tally;
    this.tally = [];
    return taken;
  }
}

/** Writes to a status subresource (any object's). */
export const statusWrites = (writes: readonly ApiWrite[]): ApiWrite[] => writes.filter((w) => w.path.endsWith('/status'));
