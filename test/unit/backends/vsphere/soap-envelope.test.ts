// encodeRequest: every string of a vim25 request is escaped, and a string XML
// 1.0 cannot carry even escaped (C0 controls, U+FFFE/U+FFFF, lone surrogates)
// is refused before it is sent, naming the field and never the value.
import { describe, expect, it } from 'vitest';
import { BackendErrorKind, isBackendError } from '../../../../controller/backends/backend-error.js';
import { encodeRequest, type XmlFields } from '../../../../controller/backends/vsphere/client/soap-envelope.js';
import { parseXml } from '../../../../controller/backends/vsphere/client/xml-element.js';

function refusal(method: string, fields: XmlFields): unknown {
  try {
    encodeRequest(method, fields);
    return undefined;
  } catch (err) {
    return err;
  }
}

describe('vim25 request encoding', () => {
  it.each([
    ['a NUL in a VM name', 'CloneVM_Task', { name: 'web\u00001' }, 'CloneVM_Task.name holds U+0000 at position 3'],
    [
      'an escape character in a folder path',
      'FindByInventoryPath',
      { inventoryPath: 'dc/vm/\u001b[31m' },
      'FindByInventoryPath.inventoryPath holds U+001B at position 6',
    ],
    [
      'a vertical tab in an extraConfig value',
      'ReconfigVM_Task',
      {
        spec: {
          extraConfig: [
            { key: 'a', value: { '@_xsi:type': 'xsd:string', '#text': 'ok' } },
            { key: 'b', value: { '@_xsi:type': 'xsd:string', '#text': 'x\u000b' } },
          ],
        },
      },
      'ReconfigVM_Task.spec.extraConfig[1].value holds U+000B at position 1',
    ],
    [
      'U+FFFF in an attribute',
      'Destroy_Task',
      { _this: { '@_type': 'Virtual\uFFFFMachine', '#text': 'vm-1' } },
      'Destroy_Task._this.@type holds U+FFFF at position 7',
    ],
    ['a lone surrogate', 'CloneVM_Task', { name: 'web-\uD800' }, 'CloneVM_Task.name holds U+D800 at position 4'],
  ])('refuses %s, naming the field', (_, method, fields, message) => {
    const err = refusal(method, fields);

    expect(isBackendError(err, BackendErrorKind.Rejected), String(err)).toBe(true);
    expect((err as Error).message).toContain(message);
    expect((err as Error).message).toContain('XML 1.0 cannot carry');
  });

  it('never puts the refused value in its message', () => {
    const err = refusal('Login', { userName: 'admin', password: 's3cr3t\u0007' });

    expect((err as Error).message).toContain('Login.password holds U+0007');
    expect((err as Error).message).not.toContain('s3cr3t');
  });

  it.each([
    ['tab, LF and CR', 'a\tb\nc\rd'],
    ['markup characters', 'Bad Name <&> "\''],
    ['non-ASCII text and an astral code point', 'Grüße 🚀 \uE000'],
  ])('carries %s, escaped, as they were', (_, text) => {
    const envelope = parseXml(encodeRequest('CloneVM_Task', { name: text }));

    expect(envelope.child('Body')?.child('CloneVM_Task')?.child('name')?.text).toBe(text.replace(/\r/g, '\n'));
  });
});
