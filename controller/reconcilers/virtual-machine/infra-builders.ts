// The desired infrastructure object of a placed VirtualMachine, complete, for
// server-side apply by the controller (upstream §2.4). Pure: the same inputs
// always give the same object, and absent optionals are omitted (never
// undefined) so the controller owns only the fields it sets. providerID is not
// set here: the provider role stamps it (DESIGN §3). Each backend's
// descriptor maps the resolved context onto its own kind.
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { BackendCatalog } from '../../backends/descriptor.js';
import type { BuildResult } from '../../backends/machine-build.js';
import { resolveBuildContext, type InfraBuildInput } from './build-context.js';

export type { InfraBuildInput } from './build-context.js';

export type InfraBuildResult = BuildResult<InfraMachine>;

/** The infra machine for `input.placement`, or a message for an InfraBuildFailed condition. */
export function buildInfraMachine(input: InfraBuildInput, backends: BackendCatalog): InfraBuildResult {
  const backend = backends.get(input.placement.providerClass);
  // The class comes from a Provider object; the CRD enum guards it, this guards a binary without that backend.
  if (!backend) return { ok: false, message: `providerClass "${input.placement.providerClass}" has no infrastructure machine kind` };
  const resolved = resolveBuildContext(input);
  if (!resolved.ok) return resolved;
  return backend.buildMachine(resolved.context);
}
