// Which kernel modules the guest's /init must insmod, in what order. The
// kernel .deb ships no modules.dep (depmod runs in its postinst, which we never
// run), so the dependencies are read from each module's own `.modinfo` ELF
// section (`depends=a,b`), as depmod itself does.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A module to load: its name (underscored, as `depends=` spells it) and file. */
export interface KernelModule {
  readonly name: string;
  readonly path: string;
}

/**
 * `wanted` and everything they depend on, dependencies first, from the tree
 * `<modulesDir>/kernel/**`. Throws when a module is missing or compressed
 * (Debian's 6.1 cloud kernel ships plain `.ko`; busybox insmod would need the
 * file decompressed first, which this builder does not do).
 */
export function resolveModules(modulesDir: string, wanted: readonly string[]): KernelModule[] {
  const index = indexModules(join(modulesDir, 'kernel'));
  const builtin = new Set(
    readFileSync(join(modulesDir, 'modules.builtin'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((p) => moduleName(p)),
  );
  const ordered: KernelModule[] = [];
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (name: string, wantedBy: string): void => {
    if (done.has(name) || builtin.has(name)) return;
    if (visiting.has(name)) throw new Error(`kernel module dependency cycle through ${name}`);
    const path = index.get(name);
    if (path === undefined) throw new Error(`kernel module ${name} (wanted by ${wantedBy}) not found under ${modulesDir}`);
    if (!path.endsWith('.ko')) throw new Error(`kernel module ${path} is compressed; only plain .ko is supported`);
    visiting.add(name);
    for (const dependency of modinfo(readFileSync(path)).get('depends')?.split(',').filter(Boolean) ?? []) visit(dependency, name);
    visiting.delete(name);
    done.add(name);
    ordered.push({ name, path });
  };
  for (const name of wanted) visit(moduleName(name), 'the guest');
  return ordered;
}

/** `drivers/char/hw_random/virtio-rng.ko` → `virtio_rng` (module names use `_`). */
function moduleName(path: string): string {
  const file = path.slice(path.lastIndexOf('/') + 1);
  return file.replace(/\.ko(\.(xz|zst|gz))?$/, '').replace(/-/g, '_');
}

function indexModules(dir: string): Map<string, string> {
  const index = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && /\.ko(\.(xz|zst|gz))?$/.test(entry.name)) index.set(moduleName(entry.name), join(entry.parentPath, entry.name));
  }
  return index;
}

/** The key=value strings of an ELF64 little-endian module's `.modinfo` section. */
export function modinfo(elf: Buffer): Map<string, string> {
  if (elf.toString('latin1', 0, 4) !== '\x7fELF' || elf[4] !== 2 || elf[5] !== 1) throw new Error('not an ELF64 little-endian module');
  const sectionHeaders = Number(elf.readBigUInt64LE(0x28));
  const headerSize = elf.readUInt16LE(0x3a);
  const count = elf.readUInt16LE(0x3c);
  const section = (i: number): { name: number; offset: number; size: number } => {
    const at = sectionHeaders + i * headerSize;
    return { name: elf.readUInt32LE(at), offset: Number(elf.readBigUInt64LE(at + 24)), size: Number(elf.readBigUInt64LE(at + 32)) };
  };
  const names = section(elf.readUInt16LE(0x3e));
  for (let i = 0; i < count; i++) {
    const s = section(i);
    const nameStart = names.offset + s.name;
    if (elf.toString('latin1', nameStart, elf.indexOf(0, nameStart)) !== '.modinfo') continue;
    const pairs = elf
      .toString('latin1', s.offset, s.offset + s.size)
      .split('\0')
      .filter(Boolean);
    return new Map(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  }
  throw new Error('module has no .modinfo section');
}
