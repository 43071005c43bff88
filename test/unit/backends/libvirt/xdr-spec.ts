// A reader of the XDR (rpcgen) definitions in libvirt's `.x` files, enough to
// spell any declared type in the canonical form of xdr-schema.ts `spec`:
// constants, enums (coded as int), typedefs, structs, and the declarators
// `T x;`, `T x<MAX>;`, `T x[N];`, `T *x;`, `string x<MAX>;`, `opaque x[N];`.

/** Constants the `.x` files use but define in C headers (include/libvirt/libvirt-host.h). */
const C_CONSTANTS: Readonly<Record<string, number>> = { VIR_UUID_BUFLEN: 16 };

const PRIMITIVES: Readonly<Record<string, string>> = {
  int: 'int',
  unsigned: 'unsigned int',
  'unsigned int': 'unsigned int',
  hyper: 'hyper',
  'unsigned hyper': 'unsigned hyper',
  char: 'char',
  'unsigned char': 'unsigned char',
  short: 'short',
  'unsigned short': 'unsigned short',
  bool: 'bool',
  float: 'float',
  double: 'double',
};

interface Declaration {
  readonly type: string;
  readonly name: string;
  /** `<MAX>` (max: undefined for `<>`), `[N]`, `*`, or none. */
  readonly shape:
    | { readonly kind: 'var'; readonly max: string | undefined }
    | { readonly kind: 'fixed'; readonly size: string }
    | { readonly kind: 'pointer' }
    | { readonly kind: 'plain' };
}

export class XdrSpec {
  readonly constants = new Map<string, number>();
  /** Every enum member by name (procedure numbers among them). */
  readonly enumValues = new Map<string, number>();
  private readonly enums = new Set<string>();
  private readonly typedefs = new Map<string, Declaration>();
  private readonly structs = new Map<string, Declaration[]>();

  constructor(sources: readonly string[]) {
    for (const source of sources) this.read(stripComments(source));
  }

  hasStruct(name: string): boolean {
    return this.structs.has(name);
  }

  /** The canonical spelling of a named struct, typedef, enum or primitive. */
  spec(typeName: string): string {
    const primitive = PRIMITIVES[typeName];
    if (primitive) return primitive;
    if (this.enums.has(typeName)) return 'int';
    const fields = this.structs.get(typeName);
    if (fields) return `struct{${fields.map((field) => `${field.name}:${this.declared(field)}`).join(';')}}`;
    const typedef = this.typedefs.get(typeName);
    if (typedef) return this.declared(typedef);
    throw new Error(`type ${typeName} is not defined in the .x files`);
  }

  private declared(declaration: Declaration): string {
    const { type, shape } = declaration;
    if (type === 'string') {
      if (shape.kind !== 'var') throw new Error(`string ${declaration.name} without <MAX>`);
      return `string<${this.bound(shape.max)}>`;
    }
    if (type === 'opaque') {
      if (shape.kind === 'fixed') return `opaque[${this.value(shape.size)}]`;
      if (shape.kind === 'var') return `opaque<${this.bound(shape.max)}>`;
      throw new Error(`opaque ${declaration.name} without a size`);
    }
    const inner = this.spec(type);
    switch (shape.kind) {
      case 'plain':
        return inner;
      case 'pointer':
        return `optional(${inner})`;
      case 'var':
        return `${inner}<${this.bound(shape.max)}>`;
      case 'fixed':
        return `${inner}[${this.value(shape.size)}]`;
    }
  }

  /** `<>` is unbounded: 2^32 - 1. */
  private bound(max: string | undefined): number {
    return max === undefined ? 0xffffffff : this.value(max);
  }

  private value(token: string): number {
    const value = this.lookup(token);
    if (value === undefined) throw new Error(`constant ${token} is not defined`);
    return value;
  }

  private lookup(token: string): number | undefined {
    if (/^(0x[0-9a-f]+|\d+)$/i.test(token)) return Number(token);
    return this.constants.get(token) ?? C_CONSTANTS[token];
  }

  private read(source: string): void {
    for (const match of source.matchAll(/\bconst\s+(\w+)\s*=\s*(\w+)\s*;/g)) {
      // Some constants alias C headers' (VIR_SECURITY_MODEL_BUFLEN): left out unless known.
      const value = this.lookup(match[2] as string);
      if (value !== undefined) this.constants.set(match[1] as string, value);
    }
    for (const match of source.matchAll(/\benum\s+(\w+)\s*\{([^}]*)\}/g)) {
      this.enums.add(match[1] as string);
      for (const member of (match[2] as string).split(',')) {
        const [name, value] = member.split('=').map((part) => part.trim());
        if (name && value) this.enumValues.set(name, this.value(value));
      }
    }
    for (const match of source.matchAll(/\btypedef\s+([^;]+);/g)) {
      const declaration = parseDeclaration(match[1] as string);
      this.typedefs.set(declaration.name, declaration);
    }
    for (const match of source.matchAll(/\bstruct\s+(\w+)\s*\{([^}]*)\}\s*;/g)) {
      const body = (match[2] as string)
        .split(';')
        .map((part) => part.trim())
        .filter((part) => part !== '');
      this.structs.set(match[1] as string, body.map(parseDeclaration));
    }
  }
}

function parseDeclaration(text: string): Declaration {
  const normalized = text.replace(/\s+/g, ' ').trim();
  const match = /^(.*?)\s*(\*?)\s*(\w+)\s*(?:<\s*(\w*)\s*>|\[\s*(\w+)\s*\])?$/.exec(normalized);
  if (!match) throw new Error(`cannot read the declaration "${normalized}"`);
  const [, type = '', pointer, name = '', max, size] = match;
  const shape: Declaration['shape'] =
    pointer === '*'
      ? { kind: 'pointer' }
      : max !== undefined
        ? { kind: 'var', max: max === '' ? undefined : max }
        : size !== undefined
          ? { kind: 'fixed', size }
          : { kind: 'plain' };
  return { type: type.trim(), name, shape };
}

function stripComments(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .split('\n')
    .filter((line) => !line.startsWith('%'))
    .join('\n');
}
