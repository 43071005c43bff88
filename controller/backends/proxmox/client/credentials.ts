// How a Proxmox VE API token is held and sent. The credentials Secret of a
// proxmox Provider carries exactly these keys (decided once here; the
// descriptor and the docs name the same):
//
//   tokenID      the full token id `USER@REALM!TOKENNAME`, e.g. `banlieue@pve!provider`
//   tokenSecret  the token's secret (the UUID `pveum user token add` prints once)
//
// A token, never a password: no ticket, no CSRF token, nothing to renew
// (pve-docs pveum.adoc, "API Tokens").

/** The credentials Secret's key names. */
export const ProxmoxCredentialKeys = {
  tokenID: 'tokenID',
  tokenSecret: 'tokenSecret',
} as const;

export interface ProxmoxToken {
  /** `USER@REALM!TOKENNAME`. */
  readonly tokenID: string;
  /** Never logged, never put in an error message. */
  readonly tokenSecret: string;
}

// pve-access-control: userid `[^\s:/]+@realm`, realm and token name `[A-Za-z][A-Za-z0-9.\-_]+`.
const TOKEN_ID = /^[^\s:/@!]+@[A-Za-z][A-Za-z0-9.\-_]+![A-Za-z][A-Za-z0-9.\-_]+$/;

/** Checks the token's shape before any call; the message names the id, never the secret. */
export function checkToken(token: ProxmoxToken): void {
  if (!TOKEN_ID.test(token.tokenID)) {
    throw new TypeError(`${ProxmoxCredentialKeys.tokenID} "${token.tokenID}" is not a Proxmox API token id (USER@REALM!TOKENNAME)`);
  }
  // The secret goes into a header: no control characters, not empty.
  if (token.tokenSecret === '' || /[\s\x00-\x1f\x7f]/.test(token.tokenSecret)) {
    throw new TypeError(`${ProxmoxCredentialKeys.tokenSecret} of token "${token.tokenID}" is empty or holds whitespace or control characters`);
  }
}

/** The `Authorization` header value PVE expects for an API token. */
export function authorizationHeader(token: ProxmoxToken): string {
  return `PVEAPIToken=${token.tokenID}=${token.tokenSecret}`;
}
