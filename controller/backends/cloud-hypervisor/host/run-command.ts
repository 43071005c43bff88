// Host commands (`ip`, `qemu-img`) as child processes: argv only (no shell), a
// deadline, the pass's AbortSignal, and failures as a BackendError whose message
// carries the command and its stderr. A command the host lacks is Unreachable
// (the host is not set up), a refusal is Rejected.
import { execFile } from 'node:child_process';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { currentSignal } from '../../cancellation.js';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** A command that exited non-zero; `stderr` is what it said. */
export class CommandError extends BackendError {
  constructor(
    readonly argv: readonly string[],
    readonly stderr: string,
    exitCode: number | string | undefined,
  ) {
    super(BackendErrorKind.Rejected, `${argv.join(' ')} failed (${String(exitCode)}): ${stderr.trim() || '(no output)'}`, { code: 'CommandFailed' });
    this.name = 'CommandError';
  }
}

/** Runs `file args…` and resolves with its output; throws CommandError on a non-zero exit. @param timeoutMs @default 30000 */
export function runCommand(file: string, args: readonly string[], timeoutMs = 30_000): Promise<CommandResult> {
  const signal = currentSignal();
  return new Promise((resolve, reject) => {
    execFile(file, [...args], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) }, (error, stdout, stderr) => {
      if (!error) return resolve({ stdout, stderr });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT')
        return reject(new BackendError(BackendErrorKind.Unreachable, `${file} is not installed on this host`, { cause: error, code: 'CommandMissing' }));
      if (error.name === 'AbortError') return reject(error);
      if ((error as { killed?: boolean }).killed) {
        return reject(
          new BackendError(BackendErrorKind.Unreachable, `${file} ${args.join(' ')} did not finish within ${timeoutMs} ms`, { cause: error, code: 'Timeout' }),
        );
      }
      reject(new CommandError([file, ...args], stderr, code));
    });
  });
}
