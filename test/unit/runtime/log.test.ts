// The roles' logs: JSON records for collectors, or one line of text per record
// with the same fields for a person; credentials redacted in both.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultLogFormat, newLogger, type LogFormat } from '../../../controller/runtime/log.js';

function logged(format: LogFormat): string {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const log = newLogger({ role: 'provider-vsphere', format, destination: out });
  log.child({ VSphereMachine: 'team-a/web-1' }).warn({ password: 'hunter2', attempt: 2 }, 'Clone failed');
  return text;
}

describe('logs', () => {
  it('writes JSON records with the level in words', () => {
    expect(JSON.parse(logged('json'))).toMatchObject({
      level: 'warn',
      role: 'provider-vsphere',
      VSphereMachine: 'team-a/web-1',
      attempt: 2,
      password: '[redacted]',
      msg: 'Clone failed',
    });
  });

  it('writes text as one line per record: time, level, message and the same fields', () => {
    const text = logged('text');
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: Clone failed /);
    expect(text).toContain('"VSphereMachine":"team-a/web-1"');
    expect(text).toContain('"password":"[redacted]"');
    expect(text).not.toContain('hunter2');
  });

  it('defaults to text on a terminal and JSON elsewhere', () => {
    expect(defaultLogFormat({ isTTY: true })).toBe('text');
    expect(defaultLogFormat({ isTTY: false })).toBe('json');
    expect(defaultLogFormat({})).toBe('json');
  });
});
