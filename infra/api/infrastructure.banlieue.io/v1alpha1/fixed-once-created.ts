// What a machine's spec may no longer change once its VM was created: the backends converge
// CPUs, memory and disk growth on a provisioned VM, but not a new template, storage, firmware
// or network, nor a smaller disk. Admission refuses such an edit, naming the field, rather
// than accept a change no backend would apply (observedGeneration advancing, Ready staying
// True).
//
// Root rules, like PLACEMENT_IMMUTABLE: only they can read oldSelf.status. "Created" is what
// that rule calls it: status.placement recorded (the provider is about to create the VM there)
// or status.initialization.provisioned. Before that nothing exists, and any edit is taken.
// A status write leaves spec as it was, and `clusterctl move` creates the machine anew (no
// oldSelf): neither is refused.
import type { CelRule } from '../../schema.js';

const CREATED =
  'has(oldSelf.status) && (has(oldSelf.status.placement) || (has(oldSelf.status.initialization) && has(oldSelf.status.initialization.provisioned) && oldSelf.status.initialization.provisioned))';

const onceCreated = (rule: string): string => `!(${CREATED}) || (${rule})`;

/** `a.f` and `b.f` are both unset or equal (an unset optional field is not the same as any value). */
const same = (a: string, b: string, field: string): string =>
  `(has(${a}.${field}) == has(${b}.${field}) && (!has(${a}.${field}) || ${a}.${field} == ${b}.${field}))`;

const HOW = 'delete the machine (or the VirtualMachine) to recreate the VM with it';

/** `spec.<field>` (any type, optional or not) keeps its value once the VM was created. */
export function fixedField(field: string, what: string): CelRule {
  return {
    rule: onceCreated(same('self.spec', 'oldSelf.spec', field)),
    message: `spec.${field} cannot change once the VM was created: the ${what} is not changed on an existing VM; ${HOW}`,
    fieldPath: `.spec.${field}`,
  };
}

/**
 * `spec.<list>` (a list-map keyed by name) keeps its entries, in order, each with the same
 * `fields` (string fields, or nested ones such as `source.name`; an optional one unset reads as
 * ''), once the VM was created: a NIC is not added, removed or re-plugged on an existing VM.
 * Compared as projected lists, one pass each: a nested search costs more than a root rule may.
 */
export function fixedListEntries(list: string, fields: readonly string[], what: string): CelRule {
  const value = (f: string): string => `(has(n.${f}) ? string(n.${f}) : '')`;
  const projected = (o: string): string => `${o}.spec.${list}.map(n, [n.name, ${fields.map(value).join(', ')}])`;
  return {
    rule: onceCreated(`has(self.spec.${list}) == has(oldSelf.spec.${list}) && (!has(self.spec.${list}) || ${projected('self')} == ${projected('oldSelf')})`),
    message: `spec.${list} cannot change once the VM was created: ${what} (${['name', ...fields].join(', ')}) are not added, removed or changed on an existing VM; ${HOW}`,
    fieldPath: `.spec.${list}`,
  };
}

/** `spec.<field>`, a size, may only grow once the VM was created: a disk is never shrunk. */
export function growOnlySize(field: string): CelRule {
  return {
    rule: onceCreated(`!has(self.spec.${field}) || !has(oldSelf.spec.${field}) || self.spec.${field} >= oldSelf.spec.${field}`),
    message: `spec.${field} cannot shrink once the VM was created: a disk is grown, never shrunk`,
    fieldPath: `.spec.${field}`,
  };
}

/** `spec.<list>[].<size>` of each entry the old spec has too (by name) may only grow once the VM was created. */
export function growOnlyListSizes(list: string, size: string): CelRule {
  return {
    rule: onceCreated(
      `!has(self.spec.${list}) || !has(oldSelf.spec.${list}) || self.spec.${list}.all(n, oldSelf.spec.${list}.all(o, o.name != n.name || n.${size} >= o.${size}))`,
    ),
    message: `spec.${list}[].${size} cannot shrink once the VM was created: a disk is grown, never shrunk`,
    fieldPath: `.spec.${list}`,
  };
}
