/** Exit codes: 0 done, 1 the API refused or could not be reached, 2 the command line is wrong. */
export const EXIT_OK = 0;
export const EXIT_API_ERROR = 1;
export const EXIT_USAGE = 2;

/** The command line is wrong: unknown command or flag, a missing or malformed value. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The command whose help to point at, e.g. `api-key create`. */
  readonly command?: string;

  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** The admin API answered with its error envelope (decisions.md §2). */
export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Array<{ field: string; issue: string }>,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

/** The API answered, but the command could not finish its work (e.g. values `secrets rotate` cannot open): exit 1. */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
}

/** No answer from the admin API (refused, reset, DNS, timeout). */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';

  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`cannot reach the admin API at ${url} (${reason})`);
  }
}
