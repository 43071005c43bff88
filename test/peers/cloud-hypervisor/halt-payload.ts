// A guest for the real VMM that needs no working guest: a minimal ELF64 "kernel" with a
// PVH entry note, whose 4 bytes of code are `cli; hlt; jmp .-2`. Cloud Hypervisor v53.0
// loads it (as `payload.kernel` or `payload.firmware`: x86_64 firmware is loaded as an
// ELF too) and enters it in 32-bit protected mode; the vCPU then sleeps in HLT with
// interrupts off, using no host CPU (checked: state Running, vcpu0 at 0 % CPU). A Linux
// guest would not get past its decompressor under the nested KVM of these machines and
// would spin a host core instead. It ignores the power button, like a guest without ACPI.
// Written at test time rather than committed as a binary.
import { writeFileSync } from 'node:fs';

// Where the segment is loaded and entered: 1 MiB, the lowest address the loader accepts.
const ENTRY = 0x100000;
const HALT = Buffer.from([0xfa, 0xf4, 0xeb, 0xfd]);
const ELF_HEADER_BYTES = 64;
const PROGRAM_HEADER_BYTES = 56;
// Xen's ELF note type for the 32-bit PVH entry point (XEN_ELFNOTE_PHYS32_ENTRY).
const XEN_ELFNOTE_PHYS32_ENTRY = 18;

export function haltPayload(): Buffer {
  const note = Buffer.alloc(16 + 4);
  note.writeUInt32LE(4, 0); // name size, "Xen\0"
  note.writeUInt32LE(4, 4); // descriptor size
  note.writeUInt32LE(XEN_ELFNOTE_PHYS32_ENTRY, 8);
  note.write('Xen\0', 12, 'latin1');
  note.writeUInt32LE(ENTRY, 16);
  const noteOffset = ELF_HEADER_BYTES + 2 * PROGRAM_HEADER_BYTES;
  const codeOffset = noteOffset + note.length;

  const header = Buffer.alloc(ELF_HEADER_BYTES);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(header); // ELF, 64-bit, little-endian, v1
  header.writeUInt16LE(2, 16); // ET_EXEC
  header.writeUInt16LE(0x3e, 18); // x86-64
  header.writeUInt32LE(1, 20);
  header.writeBigUInt64LE(BigInt(ENTRY), 24);
  header.writeBigUInt64LE(BigInt(ELF_HEADER_BYTES), 32); // program headers follow
  header.writeUInt16LE(ELF_HEADER_BYTES, 52);
  header.writeUInt16LE(PROGRAM_HEADER_BYTES, 54);
  header.writeUInt16LE(2, 56);
  header.writeUInt16LE(64, 58);

  const load = programHeader(1, 5, codeOffset, ENTRY, HALT.length, 0x1000); // PT_LOAD, R+X
  const pnote = programHeader(4, 4, noteOffset, 0, note.length, 4); // PT_NOTE
  return Buffer.concat([header, load, pnote, note, HALT]);
}

/** Writes the payload to `path` and returns the path. */
export function writeHaltPayload(path: string): string {
  writeFileSync(path, haltPayload());
  return path;
}

function programHeader(type: number, flags: number, offset: number, address: number, size: number, align: number): Buffer {
  const ph = Buffer.alloc(PROGRAM_HEADER_BYTES);
  ph.writeUInt32LE(type, 0);
  ph.writeUInt32LE(flags, 4);
  ph.writeBigUInt64LE(BigInt(offset), 8);
  ph.writeBigUInt64LE(BigInt(address), 16); // p_vaddr
  ph.writeBigUInt64LE(BigInt(address), 24); // p_paddr
  ph.writeBigUInt64LE(BigInt(size), 32);
  ph.writeBigUInt64LE(BigInt(size), 40);
  ph.writeBigUInt64LE(BigInt(align), 48);
  return ph;
}
