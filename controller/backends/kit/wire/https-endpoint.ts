// The endpoint of an HTTPS API a Provider names (vCenter's SDK URL, PVE's API server):
// parsed once, refused with a message naming it when it is no https URL or carries
// credentials (those belong in the Secret, never in a spec or a log line).

/** The endpoint as a URL; TypeError for one that is no URL, not https, or carries credentials. */
export function parseHttpsEndpoint(endpoint: string): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new TypeError(`endpoint "${endpoint}" is not a URL`);
  }
  if (url.protocol !== 'https:') throw new TypeError(`endpoint "${endpoint}" must be https`);
  if (url.username !== '' || url.password !== '') throw new TypeError('endpoint must not carry credentials');
  return url;
}
