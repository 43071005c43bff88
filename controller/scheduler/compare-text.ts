// The scheduler's only ordering: placement ties and message lists must not
// depend on the machine's locale, so no localeCompare.

/** Orders strings by UTF-16 code units, like Go's `<` on strings. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
