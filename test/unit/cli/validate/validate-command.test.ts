// `banlieue validate` as a command: what it reads (files, directories, stdin),
// what it prints (text or JSON verdicts) and its exit status.
import { describe, expect, it } from 'vitest';
import { CliError } from '../../../../controller/cli/cli-error.js';
import { validateCommand, type ValidateOptions } from '../../../../controller/cli/validate.js';

const TYPO_AND_VALID = `apiVersion: banlieue.io/v1alpha1
kind: VirtualMachine
metadata: {name: web-1}
spec: {classRef: {name: small}, imageRef: {name: ubuntu}, classRefs: {name: x}}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
---
apiVersion: banlieue.io/v1alpha1
kind: VirtualMachine
metadata: {name: web-2}
spec: {classRef: {name: small}, imageRef: {name: ubuntu}}
`;

async function run(paths: string[], options: ValidateOptions, stdin = ''): Promise<{ lines: string[]; error?: unknown }> {
  const lines: string[] = [];
  try {
    await validateCommand(paths, options, { print: (l) => lines.push(l), readStdin: async () => stdin });
    return { lines };
  } catch (error) {
    return { lines, error };
  }
}

// Each run compiles the schemas of every kind: seconds on a shared machine.
describe('banlieue validate', { timeout: 60_000 }, () => {
  it('reads a directory recursively (examples/ has no invalid object)', async () => {
    const { lines, error } = await run(['examples'], {});
    expect(error).toBeUndefined();
    expect(lines.at(-1)).toMatch(/^\d+ objects valid/);
  });

  it('reads stdin when given no path, and fails naming file, position, kind, name and field', async () => {
    const { lines, error } = await run([], {}, TYPO_AND_VALID);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toBe('1 of 2 objects are invalid');
    expect(lines).toContain('-#0: VirtualMachine web-1: spec.classRefs: unknown field "spec.classRefs"');
  });

  it('prints one JSON verdict per banlieue object with -o json', async () => {
    const { lines, error } = await run(['-'], { output: 'json' }, TYPO_AND_VALID);
    expect(error).toBeInstanceOf(CliError);
    expect(JSON.parse(lines.join('\n'))).toEqual([
      {
        file: '-',
        index: 0,
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VirtualMachine',
        name: 'web-1',
        ok: false,
        errors: [{ field: 'spec.classRefs', message: 'unknown field "spec.classRefs"' }],
        notCheckedOffline: [],
      },
      { file: '-', index: 2, apiVersion: 'banlieue.io/v1alpha1', kind: 'VirtualMachine', name: 'web-2', ok: true, errors: [], notCheckedOffline: [] },
    ]);
  });

  it('fails on a path that does not exist', async () => {
    const { error } = await run(['no-such-dir/'], {});
    expect((error as CliError).message).toContain('no-such-dir/: no such file or directory');
  });
});
