// Message layouts as data: each XdrType encodes, decodes and describes itself
// in one canonical spelling (`spec`) that test/unit/backends/libvirt/
// protocol.test.ts rebuilds from the `.x` files, so a layout written here
// that disagrees with libvirt's fails a unit test, not a call on a live host.
import { type XdrReader, type XdrWriter } from './xdr.js';

export interface XdrType<T> {
  /**
   * The layout, fully expanded: `int`, `unsigned hyper`, `string<4194304>`,
   * `opaque[16]`, `optional(T)`, `T<max>`, `T[n]`, `struct{a:T;b:U}`, `void`.
   */
  readonly spec: string;
  encode(writer: XdrWriter, value: T): void;
  decode(reader: XdrReader): T;
}

/** The TypeScript value of an XdrType. */
export type XdrValue<X> = X extends XdrType<infer T> ? T : never;

/** A struct as named in the `.x` file (remote_nonnull_domain…), for the protocol test. */
export interface XdrStruct<T> extends XdrType<T> {
  readonly name: string;
}

function primitive<T>(spec: string, encode: (w: XdrWriter, v: T) => void, decode: (r: XdrReader) => T): XdrType<T> {
  return { spec, encode, decode };
}

export const xdrInt = primitive<number>(
  'int',
  (w, v) => w.int(v),
  (r) => r.int(),
);
export const xdrUint = primitive<number>(
  'unsigned int',
  (w, v) => w.uint(v),
  (r) => r.uint(),
);
export const xdrHyper = primitive<bigint>(
  'hyper',
  (w, v) => w.hyper(v),
  (r) => r.hyper(),
);
export const xdrUhyper = primitive<bigint>(
  'unsigned hyper',
  (w, v) => w.uhyper(v),
  (r) => r.uhyper(),
);
// rpcgen codes char and short as a whole 4-byte unit (xdr_char, xdr_u_short).
export const xdrChar = primitive<number>(
  'char',
  (w, v) => w.int(v),
  (r) => r.int(),
);
export const xdrUchar = primitive<number>(
  'unsigned char',
  (w, v) => w.uint(v),
  (r) => r.uint(),
);
export const xdrUshort = primitive<number>(
  'unsigned short',
  (w, v) => w.uint(v),
  (r) => r.uint(),
);

/** No payload (a procedure without args or ret). */
export const xdrVoid = primitive<void>(
  'void',
  () => undefined,
  () => undefined,
);

export function xdrString(max: number): XdrType<string> {
  return primitive(
    `string<${max}>`,
    (w, v) => w.string(v, max),
    (r) => r.string(max),
  );
}

export function xdrFixedOpaque(size: number): XdrType<Buffer> {
  return primitive(
    `opaque[${size}]`,
    (w, v) => w.fixedOpaque(v, size),
    (r) => r.fixedOpaque(size),
  );
}

/** `T *`: a bool, then the value when true. Absent is `undefined`. */
export function xdrOptional<T>(inner: XdrType<T>): XdrType<T | undefined> {
  return primitive(
    `optional(${inner.spec})`,
    (w, v) => {
      w.uint(v === undefined ? 0 : 1);
      if (v !== undefined) inner.encode(w, v);
    },
    (r) => (r.uint() === 0 ? undefined : inner.decode(r)),
  );
}

/** `T name<max>`: a count, then the elements. */
export function xdrArray<T>(inner: XdrType<T>, max: number): XdrType<T[]> {
  return primitive(
    `${inner.spec}<${max}>`,
    (w, v) => {
      if (v.length > max) throw new RangeError(`array<${max}> given ${v.length} elements`);
      w.uint(v.length);
      for (const item of v) inner.encode(w, item);
    },
    (r) => {
      const count = r.uint();
      if (count > max) throw new RangeError(`array<${max}> announces ${count} elements`);
      return Array.from({ length: count }, () => inner.decode(r));
    },
  );
}

/** `T name[n]`: exactly n elements, no count. */
export function xdrFixedArray<T>(inner: XdrType<T>, size: number): XdrType<T[]> {
  return primitive(
    `${inner.spec}[${size}]`,
    (w, v) => {
      if (v.length !== size) throw new RangeError(`array[${size}] given ${v.length} elements`);
      for (const item of v) inner.encode(w, item);
    },
    (r) => Array.from({ length: size }, () => inner.decode(r)),
  );
}

type Fields = Record<string, XdrType<unknown>>;
type StructValue<F extends Fields> = { [K in keyof F]: XdrValue<F[K]> };

/** A struct: its fields in order, as the `.x` file declares them (object key order is field order). */
export function xdrStruct<F extends Fields>(name: string, fields: F): XdrStruct<StructValue<F>> {
  const entries = Object.entries(fields);
  return {
    name,
    spec: `struct{${entries.map(([field, type]) => `${field}:${type.spec}`).join(';')}}`,
    encode(writer, value) {
      for (const [field, type] of entries) type.encode(writer, (value as Record<string, unknown>)[field]);
    },
    decode(reader) {
      const value: Record<string, unknown> = {};
      for (const [field, type] of entries) value[field] = type.decode(reader);
      return value as StructValue<F>;
    },
  };
}
