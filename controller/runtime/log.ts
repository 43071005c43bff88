// Structured JSON logs (pino). One root logger, made in cli/ and passed down;
// each reconcile gets a child carrying reconcileID and the object by kind.
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export function newLogger(options: { level?: LogLevel; role: string; destination?: NodeJS.WritableStream }): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { role: options.role },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Belt and braces: credential-looking keys never reach the log.
      redact: { paths: ['password', 'token', 'tokenSecret', '*.password', '*.token', '*.tokenSecret', 'authorization'], censor: '[redacted]' },
    },
    options.destination as never,
  );
}

/** A logger that drops everything, for unit tests of components that log. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
