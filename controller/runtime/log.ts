// Structured logs (pino). One root logger, made in cli/ and passed down; each
// reconcile gets a child carrying reconcileID and the object by kind. JSON for
// log collectors; text (pino-pretty, one line per record, the same fields) for
// a person at a terminal.
import { pino, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';

export type { Logger } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';

/** Text on a terminal, JSON otherwise (a pod's log, a pipe, a file). */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stdout): LogFormat {
  return stream.isTTY === true ? 'text' : 'json';
}

export function newLogger(options: { level?: LogLevel; role: string; format?: LogFormat; destination?: NodeJS.WritableStream }): Logger {
  const format = options.format ?? 'json';
  const destination =
    format === 'text'
      ? PinoPretty({
          destination: options.destination ?? process.stdout,
          colorize: options.destination === undefined && process.stdout.isTTY === true,
          singleLine: true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
          sync: true,
        })
      : options.destination;
  return pino(
    {
      level: options.level ?? 'info',
      base: { role: options.role },
      timestamp: pino.stdTimeFunctions.isoTime,
      // pino-pretty reads pino's numeric levels; JSON says them in words.
      ...(format === 'json' ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
      // Belt and braces: credential-looking keys never reach the log.
      redact: { paths: ['password', 'token', 'tokenSecret', '*.password', '*.token', '*.tokenSecret', 'authorization'], censor: '[redacted]' },
    },
    destination as never,
  );
}

/** A logger that drops everything, for unit tests of components that log. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
