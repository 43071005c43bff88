// Parameters as the PVE API server reads them: `application/x-www-form-urlencoded`
// in the body (POST, PUT) or the query (GET, DELETE), every value a string.
// PVE's own JSON-schema check then converts them back (PVE::JSONSchema
// check_type): booleans as 1/0, arrays as the key repeated.

/** A parameter value as the typed calls give it; undefined means "not sent". */
export type ParamValue = string | number | boolean | readonly (string | number)[] | undefined;

/** Form-encodes `params`, leaving out undefined ones. */
export function encodeForm(params: Readonly<Record<string, ParamValue>>): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const item of formValues(value)) form.append(name, item);
  return form.toString();
}

/** One value as the strings PVE reads: none for undefined, 1/0 for booleans, one per array item. */
export function formValues(value: ParamValue): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return (value as readonly (string | number)[]).map(String);
  return [typeof value === 'boolean' ? (value ? '1' : '0') : String(value)];
}

/**
 * A value for a parameter of format `urlencoded` (cloud-init `sshkeys`): PVE
 * percent-decodes it once more after the form decoding and refuses any
 * character outside `[-%a-zA-Z0-9_.!~*'()]` (pve_verify_urlencoded), which is
 * exactly what encodeURIComponent leaves unescaped.
 */
export function urlencodedValue(text: string): string {
  return encodeURIComponent(text);
}

/** `sshkeys`: one OpenSSH public key per line, urlencoded. */
export function sshKeysValue(keys: readonly string[]): string {
  return urlencodedValue(keys.map((key) => key.trim()).join('\n'));
}
