// One bound for every free text the controllers write into the API server. A
// message built from user input (a 100 KB value, an API error quoting it back)
// must never make the write it is part of fail: a refused status write would
// leave the object saying nothing at all.

/**
 * Longest condition message written, in UTF-8 bytes: CAPI v1beta2's own bound
 * (metav1.Condition allows 32768), so several conditions of one object stay
 * far below the object size limit.
 */
export const CONDITION_MESSAGE_MAX_BYTES = 10_240;

/** Longest Event note (events.k8s.io/v1 refuses more than 1 KiB, counted in bytes). */
export const EVENT_NOTE_MAX_BYTES = 1024;

const ELLIPSIS = '…';

/**
 * `text` when it fits in `maxBytes` UTF-8 bytes; otherwise its start, cut at
 * a character boundary, followed by an ellipsis, the whole within `maxBytes`.
 */
export function bounded(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(ELLIPSIS, 'utf8');
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > room) break;
    bytes += size;
    end += ch.length;
  }
  return `${text.slice(0, end)}${ELLIPSIS}`;
}
