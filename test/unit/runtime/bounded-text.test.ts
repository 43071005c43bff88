import { describe, expect, it } from 'vitest';
import { bounded, CONDITION_MESSAGE_MAX_BYTES } from '../../../controller/runtime/bounded-text.js';
import { setCondition } from '../../../controller/runtime/conditions.js';
import { Reason } from '../../../infra/api/conditions.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

describe('bounded text', () => {
  it('leaves text that fits as it is', () => {
    expect(bounded('no Provider matches', 100)).toBe('no Provider matches');
  });

  it('cuts longer text to the bound, ending with an ellipsis', () => {
    const out = bounded('x'.repeat(200), 100);
    expect(bytes(out)).toBeLessThanOrEqual(100);
    expect(out.endsWith('…')).toBe(true);
    expect(out.startsWith('xxxx')).toBe(true);
  });

  it('never cuts a character in two (multi-byte and surrogate pairs)', () => {
    const out = bounded('é🙂'.repeat(100), 50);
    expect(bytes(out)).toBeLessThanOrEqual(50);
    expect(out).toBe(Buffer.from(out, 'utf8').toString('utf8'));
    expect(out.replace(/…$/, '')).toMatch(/^(é🙂)*é?$/u);
  });

  // A message quoting a 100 KB value must stay within metav1.Condition's 32 KiB, or every status write is refused.
  it('bounds every condition message', () => {
    const [ready] = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: Reason.Reconciled, message: `no Provider matches selector ${'v'.repeat(100_000)}` },
      new Date(),
    );
    expect(bytes(ready?.message ?? '')).toBeLessThanOrEqual(CONDITION_MESSAGE_MAX_BYTES);
    expect(ready?.message.startsWith('no Provider matches selector vvv')).toBe(true);
    expect(ready?.message.endsWith('…')).toBe(true);
  });
});
