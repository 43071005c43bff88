// `banlieue completion bash|zsh|fish`: the bash script, sourced in a real bash with COMP_WORDS
// set as bash sets them, completes what the program's commands and options are.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../controller/cli/main.js';
import { completionScript } from '../../../controller/cli/completion.js';
import { runCli } from '../../support/cli-in-process.js';

/** What bash completes for the words typed so far (the last one is the word being completed). */
function complete(script: string, words: readonly string[]): string[] {
  const array = words.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(' ');
  const probe = `${script}\nCOMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _banlieue; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['--norc', '--noprofile', '-c', probe], { encoding: 'utf8', cwd: '/' })
    .split('\n')
    .filter((line) => line !== '');
}

describe('banlieue completion', () => {
  it('prints a bash script that completes the subcommands, those of vm, and their options', async () => {
    const run = await runCli(['completion', 'bash']);
    expect(run.rc).toBe(0);
    const script = run.out;
    expect(complete(script, ['banlieue', ''])).toEqual(
      expect.arrayContaining(['bootstrap', 'controller', 'provider', 'validate', 'version', 'vm', 'completion']),
    );
    expect(complete(script, ['banlieue', 'v'])).toEqual(['validate', 'version', 'vm']);
    expect(complete(script, ['banlieue', 'vm', ''])).toEqual(['start', 'stop', 'restart', '-h', '--help']);
    expect(complete(script, ['banlieue', 'vm', 'res'])).toEqual(['restart']);
    expect(complete(script, ['banlieue', 'vm', 'restart', 'web-1', '--'])).toEqual(['--namespace', '--kubeconfig', '--context', '--help']);
    expect(complete(script, ['banlieue', 'completion', ''])).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
  });

  it('skips options and their values to find the command, and completes values from their choices', async () => {
    const script = (await runCli(['completion', 'bash'])).out;
    expect(complete(script, ['banlieue', 'vm', '-n', 'vm', 's'])).toEqual(['start', 'stop']);
    expect(complete(script, ['banlieue', 'validate', '-o', ''])).toEqual(['text', 'json']);
    expect(complete(script, ['banlieue', 'controller', '--log-format', 'j'])).toEqual(['json']);
  });

  it('completes a command added to the program with no list to update', () => {
    const program = buildProgram();
    program.command('frobnicate').option('--widget <name>', 'a widget');
    const script = completionScript(program, 'bash');
    expect(complete(script, ['banlieue', 'fro'])).toEqual(['frobnicate']);
    expect(complete(script, ['banlieue', 'frobnicate', '--w'])).toEqual(['--widget']);
  });

  it.each([
    ['zsh', 'bashcompinit'],
    ['fish', 'complete -c banlieue -n "test (__banlieue_path) = \'banlieue vm\'" -a restart'],
  ])('prints a %s script', async (shell, line) => {
    const run = await runCli(['completion', shell]);
    expect(run.rc).toBe(0);
    expect(run.out).toContain(line);
  });

  it('names the shells it knows when given another', async () => {
    const run = await runCli(['completion', 'tcsh']);
    expect(run.rc).not.toBe(0);
    expect(run.err).toContain('bash, zsh, fish');
  });
});
