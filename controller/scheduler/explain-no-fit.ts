// Why no candidate survived the checks, as one Scheduled=False reason and a
// message. The reason is the most actionable one that is true: an image that
// is nowhere ready, then missing Secure Boot, else the list of rejections.
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../infra/api/conditions.js';
import { candidateName, type CandidateContext, type Rejection } from './candidates.js';
import { ImageRows } from './image-readiness.js';

/** Entries a message lists; the rest are counted, so a large fleet stays readable. */
export const MAX_LISTED = 10;

export interface NoFit {
  readonly reason: typeof Reason.ImageNotReady | typeof Reason.FirmwareUnsupported | typeof Reason.NoFailureDomainMatched;
  readonly message: string;
}

/** The reason nothing fits, given the usable Providers and every candidate's rejection. */
export function explainNoFit(context: CandidateContext, providers: readonly Provider[], rejections: readonly Rejection[]): NoFit {
  const imageName = `VMImage "${context.image.metadata.name ?? ''}"`;
  const imageRows = new ImageRows(context.image);
  const imageBlockers = providers.map((p) => ({ provider: p.metadata.name ?? '', why: imageRows.whyNotReady(p) }));
  if (imageBlockers.every((b) => b.why !== undefined)) {
    const list = listCapped(imageBlockers.map((b) => `${b.provider}: ${b.why ?? ''}`));
    return { reason: Reason.ImageNotReady, message: `${imageName} is not ready on any matching Provider: ${list}` };
  }
  const onlyFirmware = rejections.filter((r) => r.check === 'firmware');
  if (onlyFirmware.length > 0) {
    const names = listCapped(onlyFirmware.map((r) => candidateName(r.candidate)));
    const message = `VMClass "${context.vmClass.metadata.name ?? ''}" needs efi-secure firmware, but the failure domains that fit otherwise lack feature "efiSecureBoot": ${names}`;
    return { reason: Reason.FirmwareUnsupported, message };
  }
  const list = listCapped(rejections.map((r) => `${candidateName(r.candidate)}: ${r.why}`));
  return { reason: Reason.NoFailureDomainMatched, message: `No failure domain fits: ${list}` };
}

/** `entries` joined by '; ', past MAX_LISTED counted. */
export function listCapped(entries: readonly string[]): string {
  const listed = entries.slice(0, MAX_LISTED);
  const more = entries.length - listed.length;
  return more > 0 ? [...listed, `... and ${more} more`].join('; ') : listed.join('; ');
}
