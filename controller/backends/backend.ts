// What a provider role needs from a backend. A backend is a folder under
// controller/backends/; adding one touches no reconciler (STYLE §2).
import type { Backend as BackendName, FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';

/** Whether an image source is usable on one Provider (its VMImage status row). */
export interface ImageResolution {
  readonly ready: boolean;
  /** Backend reference of the image (template path, VMID, volume). */
  readonly resolvedRef?: string;
  /** CamelCase reason when not ready, e.g. TemplateNotFound. */
  readonly reason?: string;
  readonly message?: string;
}

/** How to reach one backend instance, resolved from the Provider and its Secret. */
export interface Connection {
  readonly endpoint: string;
  /** The credentials Secret's data, decoded; never logged. */
  readonly credentials: Readonly<Record<string, string>>;
  readonly caPem?: string;
  readonly insecureSkipTLSVerify: boolean;
}

export interface Backend {
  readonly name: BackendName;
  /** Secret keys the credentials need, e.g. username and password. */
  readonly credentialKeys: readonly string[];
  /** Connect and read what the backend offers; throws BackendError. */
  discover(provider: Provider, connection: Connection): Promise<FailureDomainStatus[]>;
  /** Find an image source on the backend; throws BackendError when it cannot tell. */
  resolveImage(provider: Provider, connection: Connection, source: ImageSource): Promise<ImageResolution>;
}
