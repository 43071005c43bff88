// Reading a request as pveproxy does: parameters from the query and from a
// form, JSON or multipart body (an upload's file part handed on as
// `filename` + `tmpfilename`), every value a string, repeated keys as lists.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface ParsedRequest {
  readonly params: Record<string, string | string[]>;
  readonly file?: Buffer;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function readRequest(req: IncomingMessage, url: URL): Promise<ParsedRequest> {
  const params: Record<string, string | string[]> = {};
  const add = (name: string, value: string): void => {
    const previous = params[name];
    params[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  };
  for (const [name, value] of url.searchParams) add(name, value);
  const body = await readBody(req);
  const type = req.headers['content-type'] ?? '';
  if (body.length === 0) return { params };
  if (type.startsWith('application/x-www-form-urlencoded')) {
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) add(name, value);
    return { params };
  }
  if (type.startsWith('application/json')) {
    const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    for (const [name, value] of Object.entries(json)) {
      for (const item of Array.isArray(value) ? value : [value]) add(name, typeof item === 'boolean' ? (item ? '1' : '0') : String(item));
    }
    return { params };
  }
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
  if (type.startsWith('multipart/form-data') && boundary) {
    const file = parseMultipart(body, boundary[1] ?? boundary[2] ?? '', add);
    return file ? { params, file } : { params };
  }
  throw new Error(`unsupported content type "${type}"`);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error('request body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Fields become parameters; the file part (there is one) gives `filename` and `tmpfilename` as pveproxy does. */
function parseMultipart(body: Buffer, boundary: string, add: (name: string, value: string) => void): Buffer | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  let file: Buffer | undefined;
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2); // after CRLF, before CRLF
    const headerEnd = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, headerEnd).toString('utf8');
    const content = part.subarray(headerEnd + 4);
    const name = /(?:^|;\s*)name="([^"]*)"/.exec(headers)?.[1] ?? '';
    const fileName = /filename="([^"]*)"/.exec(headers)?.[1];
    if (fileName !== undefined) {
      add(name, fileName);
      add('tmpfilename', `/var/tmp/pveupload-${randomBytes(16).toString('hex')}`);
      file = Buffer.from(content);
    } else {
      add(name, content.toString('utf8'));
    }
    at = next;
  }
  return file;
}
