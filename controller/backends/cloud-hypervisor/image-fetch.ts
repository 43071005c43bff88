// The GET of a Url image: over https, verified against the system's CAs and the
// host's mirror CAs (urlImages.caFile), or over http on a lab host that opts in.
// Redirects are followed only within the URL's origin (scheme, host and port),
// at most MAX_REDIRECTS: a redirect elsewhere would let whoever answers the URL
// pick which host the provider fetches from (an address only the host can reach,
// or a downgrade to http), so it is refused without a request to it. Errors that
// the host's policy raises carry their reason (ImageRefusal); the rest are plain.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Reason } from '../../../infra/api/conditions.js';
import { BACKEND_USER_AGENT } from '../user-agent.js';

/** Redirects followed within the origin before the download gives up. */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A download the host's policy stopped; the VMImage row reads `reason`. */
export class ImageRefusal extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
  ) {
    super(message);
    this.name = 'ImageRefusal';
  }
}

export interface ImageFetchOptions {
  /** CAs to verify https servers with. @default Node's default roots */
  readonly ca?: readonly string[];
  /** Take http:// URLs (a lab host's opt-in). */
  readonly allowHttp: boolean;
  /** A connection silent this long fails the download. */
  readonly idleTimeoutMs: number;
}

/** `url` without its credentials and query, for status messages (which anyone who reads VMImages reads). */
export function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** The response (2xx or not) to GET `url`, after the redirects within its origin. */
export async function openImage(url: URL, options: ImageFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  let at = url;
  for (let redirects = 0; ; redirects++) {
    const response = await get(at, options, signal);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || location === undefined) return response;
    response.resume();
    const next = new URL(location, at);
    if (next.origin !== url.origin) {
      throw new ImageRefusal(
        Reason.ImageRedirectRefused,
        `${shownUrl(url)} redirects to ${next.origin}, another origin than ${url.origin}; not followed (use the URL it redirects to)`,
      );
    }
    if (redirects >= MAX_REDIRECTS) throw new Error(`${shownUrl(url)}: more than ${MAX_REDIRECTS} redirects`);
    at = next;
  }
}

function get(url: URL, options: ImageFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const common = { method: 'GET', signal, headers: { 'accept-encoding': 'identity', 'user-agent': BACKEND_USER_AGENT }, timeout: options.idleTimeoutMs };
    let request;
    if (url.protocol === 'https:') request = httpsRequest(url, { ...common, ...(options.ca ? { ca: [...options.ca] } : {}) });
    else if (url.protocol === 'http:' && options.allowHttp) request = httpRequest(url, common);
    else throw new ImageRefusal(Reason.ImageUrlRefused, `${shownUrl(url)} is not https`);
    request.once('response', resolve);
    request.once('error', reject);
    request.once('timeout', () => request.destroy(new Error(`no answer from ${url.host} for ${options.idleTimeoutMs / 1000} s`)));
    request.end();
  });
}
