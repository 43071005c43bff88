// One document read by `banlieue validate`, with where it came from.

export interface InputDocument {
  /** The file it came from; `-` for stdin. */
  readonly file: string;
  /** Position among the file's documents, from 0. */
  readonly index: number;
  /** The parsed document; undefined when it is not valid YAML/JSON. */
  readonly object: unknown;
  /** The parse error, when there is one. */
  readonly parseError?: string;
}

interface Identity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
}

/** apiVersion, kind and name for a verdict, whatever the document holds. */
export function identityOf(doc: InputDocument): Identity {
  const o = (doc.object && typeof doc.object === 'object' ? doc.object : {}) as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; generateName?: unknown };
  };
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  return { apiVersion: text(o.apiVersion), kind: text(o.kind), name: text(o.metadata?.name) || text(o.metadata?.generateName) };
}
