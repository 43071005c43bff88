// multipart/form-data for PVE's upload call. pveproxy streams the file part
// to /var/tmp and hands the API `filename` (the part's file name) and
// `tmpfilename`; it wants the file as the last part (PVE::APIServer::AnyEvent
// file_upload_multipart), so the fields come first.
import { randomBytes } from 'node:crypto';

export interface MultipartFile {
  /** The form field the file goes in. */
  readonly field: string;
  readonly fileName: string;
  readonly data: Buffer;
}

export interface MultipartBody {
  readonly contentType: string;
  readonly body: Buffer;
}

export function encodeMultipart(fields: Readonly<Record<string, string>>, file: MultipartFile): MultipartBody {
  const boundary = `banlieue-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.fileName)}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

/** Field and file names are ours (storage file names), but a quote or newline would break the header. */
function quote(name: string): string {
  if (/["\r\n]/.test(name)) throw new TypeError(`multipart name ${JSON.stringify(name)} holds a quote or a line break`);
  return name;
}
