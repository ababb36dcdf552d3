/** The SDK's log: one line a message on stderr (stdout stays the bot's own). */

export const LogLevel = { ERROR: 0, WARN: 1, INFO: 2, DEBUG: 3 } as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

const NAMES = ['ERROR', 'WARNING', 'INFO', 'DEBUG'];

export class Logger {
  constructor(
    public level: LogLevel = LogLevel.WARN,
    private readonly name = 'skyjo-sdk',
  ) {}

  enabled(level: LogLevel): boolean {
    return level <= this.level;
  }

  log(level: LogLevel, message: string): void {
    if (level <= this.level) process.stderr.write(`${new Date().toISOString()} ${this.name} ${NAMES[level]} ${message}\n`);
  }

  error(message: string): void {
    this.log(LogLevel.ERROR, message);
  }

  warn(message: string): void {
    this.log(LogLevel.WARN, message);
  }

  info(message: string): void {
    this.log(LogLevel.INFO, message);
  }

  debug(message: string): void {
    this.log(LogLevel.DEBUG, message);
  }
}
