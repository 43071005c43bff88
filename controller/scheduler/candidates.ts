// Candidates are (Provider, failure domain) pairs. Each passes the checks in
// upstream order or is rejected by the first that fails, with a short phrase
// users read in the Scheduled condition.
import type { FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { compareText } from './compare-text.js';
import { ImageRows } from './image-readiness.js';
import { matchesSelector } from './label-selector.js';

export interface Candidate {
  readonly provider: Provider;
  readonly failureDomain: FailureDomainStatus;
}

/** What a candidate is checked against. */
export interface CandidateContext {
  readonly vm: VirtualMachine;
  readonly vmClass: VMClass;
  readonly image: VMImage;
}

export type CheckName = 'failureDomainSelector' | 'image' | 'storageClasses' | 'networkClasses' | 'features' | 'firmware';

export interface Rejection {
  readonly candidate: Candidate;
  /** The first check the candidate failed. */
  readonly check: CheckName;
  /** Why, e.g. `storage class "fast" not available`. */
  readonly why: string;
}

export interface CandidateVerdicts {
  readonly survivors: readonly Candidate[];
  readonly rejections: readonly Rejection[];
}

/** What each check reads: the context, and what it asks of every candidate (the image's rows indexed, the classes wanted) read once. */
interface CheckContext extends CandidateContext {
  readonly imageRows: ImageRows;
  /** Storage classes, network classes and features the VM's class asks for, each once. */
  readonly wanted: { readonly storage: readonly string[]; readonly networks: readonly string[]; readonly features: readonly string[] };
}

interface Check {
  readonly name: CheckName;
  readonly why: (candidate: Candidate, context: CheckContext) => string | undefined;
}

// Upstream order (scheduler filters 2.1–2.6). `firmware` runs last, so a
// candidate it rejects fits in every other respect.
const CHECKS: readonly Check[] = [
  { name: 'failureDomainSelector', why: whyFailureDomainSelectorFails },
  { name: 'image', why: whyImageFails },
  { name: 'storageClasses', why: whyStorageFails },
  { name: 'networkClasses', why: whyNetworksFail },
  { name: 'features', why: whyFeaturesFail },
  { name: 'firmware', why: whyFirmwareUnsupported },
];

/** Every failure domain of every Provider, ordered by {@link compareCandidates}. */
export function listCandidates(providers: readonly Provider[]): Candidate[] {
  return providers.flatMap((provider) => (provider.status?.failureDomains ?? []).map((failureDomain) => ({ provider, failureDomain }))).sort(compareCandidates);
}

/** Splits `candidates` into those passing every check and those rejected, order kept. */
export function checkCandidates(candidates: readonly Candidate[], context: CandidateContext): CandidateVerdicts {
  const survivors: Candidate[] = [];
  const rejections: Rejection[] = [];
  const { hardware, network, features } = context.vmClass.spec;
  const wanted = {
    storage: [...new Set(hardware.disks.map((d) => d.storageClass))],
    networks: [...new Set(network.interfaces.map((i) => i.networkClass))],
    features: [...new Set(features ?? [])],
  };
  const checked: CheckContext = { ...context, imageRows: new ImageRows(context.image), wanted };
  for (const candidate of candidates) {
    const rejection = firstRejection(candidate, checked);
    if (rejection) rejections.push(rejection);
    else survivors.push(candidate);
  }
  return { survivors, rejections };
}

/** `provider/failure-domain`, as messages name a candidate. */
export function candidateName(candidate: Candidate): string {
  return `${candidate.provider.metadata.name ?? ''}/${candidate.failureDomain.name}`;
}

/** The tie-break: Provider name, then failure-domain name. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  const byProvider = compareText(a.provider.metadata.name ?? '', b.provider.metadata.name ?? '');
  return byProvider !== 0 ? byProvider : compareText(a.failureDomain.name, b.failureDomain.name);
}

function firstRejection(candidate: Candidate, context: CheckContext): Rejection | undefined {
  for (const check of CHECKS) {
    const why = check.why(candidate, context);
    if (why !== undefined) return { candidate, check: check.name, why };
  }
  return undefined;
}

function whyFailureDomainSelectorFails(candidate: Candidate, context: CandidateContext): string | undefined {
  const selector = context.vm.spec.placement?.failureDomainSelector;
  if (matchesSelector(candidate.failureDomain.labels, selector)) return undefined;
  return 'labels do not match spec.placement.failureDomainSelector';
}

function whyImageFails(candidate: Candidate, context: CheckContext): string | undefined {
  const why = context.imageRows.whyNotReady(candidate.provider);
  return why === undefined ? undefined : `VMImage "${context.image.metadata.name ?? ''}" ${why}`;
}

function whyStorageFails(candidate: Candidate, context: CheckContext): string | undefined {
  return whyMissing(['storage class', 'storage classes'], context.wanted.storage, attributesOf(candidate).availableStorageClasses);
}

function whyNetworksFail(candidate: Candidate, context: CheckContext): string | undefined {
  return whyMissing(['network class', 'network classes'], context.wanted.networks, attributesOf(candidate).availableNetworkClasses);
}

function whyFeaturesFail(candidate: Candidate, context: CheckContext): string | undefined {
  return whyMissing(['feature', 'features'], context.wanted.features, attributesOf(candidate).features);
}

function whyFirmwareUnsupported(candidate: Candidate, context: CandidateContext): string | undefined {
  if (context.vmClass.spec.firmware !== 'efi-secure') return undefined;
  const offered = attributesOf(candidate).features ?? [];
  return offered.includes('efiSecureBoot') ? undefined : 'efi-secure firmware needs feature "efiSecureBoot"';
}

/** `wanted` (each name once) less `available`, said as a short phrase; undefined when nothing is missing. */
function whyMissing([one, many]: readonly [string, string], wanted: readonly string[], available: readonly string[] | undefined): string | undefined {
  // Most candidates offer everything: found so without building a list.
  if (wanted.every((name) => available?.includes(name))) return undefined;
  const missing = wanted.filter((name) => !(available ?? []).includes(name));
  const names = missing.map((name) => `"${name}"`).join(', ');
  return `${missing.length === 1 ? one : many} ${names} not available`;
}

function attributesOf(candidate: Candidate): NonNullable<FailureDomainStatus['attributes']> {
  return candidate.failureDomain.attributes ?? {};
}
