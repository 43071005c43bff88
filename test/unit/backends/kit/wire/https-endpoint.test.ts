// The wire kit's checks of what a Provider names: its https endpoint and its CA bundle.
import { describe, expect, it } from 'vitest';
import { parseHttpsEndpoint } from '../../../../../controller/backends/kit/wire/https-endpoint.js';
import { checkCaPem } from '../../../../../controller/backends/kit/wire/tls-agent.js';

describe('an https endpoint', () => {
  it('is taken as a URL', () => {
    expect(parseHttpsEndpoint('https://vcenter.example.com/sdk').href).toBe('https://vcenter.example.com/sdk');
  });

  it.each([
    ['not a URL', 'vcenter.example.com', /is not a URL/],
    ['http', 'http://vcenter.example.com/sdk', /must be https/],
    ['carrying credentials', 'https://admin:secret@vcenter.example.com/sdk', /must not carry credentials/],
  ])('is refused when %s, without repeating a password', (_case, endpoint, message) => {
    expect(() => parseHttpsEndpoint(endpoint)).toThrow(message);
    expect(() => parseHttpsEndpoint(endpoint)).not.toThrow(/secret/);
  });
});

describe('a CA bundle', () => {
  it('is refused when it holds no certificate (a key or a fingerprint pasted instead)', () => {
    expect(() => checkCaPem('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n')).toThrow(/holds no PEM certificate/);
  });
});
