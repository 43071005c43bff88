// An HTTP answer's body read whole, up to a bound: an answer past it is a broken server or
// proxy (or not the API at all), not something to buffer without end.
import type { IncomingMessage } from 'node:http';

/** The body as UTF-8; the response is destroyed (its reader sees an error) once it passes `maxBytes`. */
export function readBoundedBody(res: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) res.destroy(new Error(`response larger than ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}
