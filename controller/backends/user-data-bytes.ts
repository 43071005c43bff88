// User-data is bytes, handed to the guest as it was given. cloud-init
// takes gzip-compressed user-data (it gunzips what starts with the gzip magic
// 1f 8b; bootstrap providers compress to fit size limits), and a Secret may hold
// any bytes: decoding them as UTF-8 would replace every invalid byte by U+FFFD
// and corrupt them. Only text is ever read as text (placeholders, ADR 0007).

/** User-data as read from a Secret or ConfigMap: its bytes; a string is its UTF-8 text (as tests write it). */
export type UserData = string | Uint8Array;

const GZIP_MAGIC = [0x1f, 0x8b] as const;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes of `data`; a string as UTF-8. */
export function userDataBytes(data: UserData): Buffer {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** Whether `data` is gzip-compressed (RFC 1952 magic). */
export function isGzip(data: UserData): boolean {
  return typeof data !== 'string' && data.length >= 2 && data[0] === GZIP_MAGIC[0] && data[1] === GZIP_MAGIC[1];
}

/** `data` as text when it is UTF-8 text (not gzip); undefined for binary user-data, which is only ever passed on as is. */
export function userDataText(data: UserData): string | undefined {
  if (typeof data === 'string') return data;
  if (isGzip(data)) return undefined;
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}
