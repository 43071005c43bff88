// `banlieue placement`'s command line, as the program parses it (no cluster is reached).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../support/cli-in-process.js';

/** What bash completes for the words typed so far, from `banlieue completion bash`. */
function complete(script: string, words: readonly string[]): string[] {
  const array = words.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(' ');
  const probe = `${script}\nCOMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _banlieue; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['--norc', '--noprofile', '-c', probe], { encoding: 'utf8', cwd: '/' })
    .split('\n')
    .filter((line) => line !== '');
}

describe('banlieue placement command line', () => {
  it('completes the command, its options and its output formats', async () => {
    const script = (await runCli(['completion', 'bash'])).out;
    expect(complete(script, ['banlieue', 'pl'])).toEqual(['placement']);
    expect(complete(script, ['banlieue', 'placement', '--'])).toEqual(
      expect.arrayContaining(['--namespace', '--all-namespaces', '--output', '--kubeconfig', '--context']),
    );
    expect(complete(script, ['banlieue', 'placement', '-o', ''])).toEqual(['table', 'svg', 'html']);
  });

  it.each([
    [['-n', 'team-a', '-A'], 'error: --namespace and --all-namespaces exclude each other\n'],
    [['-o', 'png'], "error: option '-o, --output <format>' argument 'png' is invalid. Allowed choices are table, svg, html.\n"],
  ])('refuses %j before reaching any cluster', async (args, message) => {
    const run = await runCli(['placement', ...args]);
    expect(run.rc).toBe(1);
    expect(run.err).toContain(message);
  });
});
