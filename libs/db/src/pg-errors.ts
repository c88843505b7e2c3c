/** SQLSTATE codes this library reacts to. */
export const PG = {
  uniqueViolation: '23505',
  duplicateObject: '42710',
  duplicateSchema: '42P06',
  duplicateDatabase: '42P04',
  insufficientPrivilege: '42501',
  invalidCatalogName: '3D000',
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Two sessions creating the same catalog object at once: the loser sees either the
 * friendly duplicate error or a raw unique violation on the catalog index.
 */
export function isDuplicateError(err: unknown): boolean {
  const code = pgErrorCode(err);
  return code === PG.uniqueViolation || code === PG.duplicateObject || code === PG.duplicateSchema || code === PG.duplicateDatabase;
}

/** Connection and authentication failures: the operator fixes them, a stack trace does not help. */
export function describeConnectionError(err: unknown, url: string): string | undefined {
  const code = pgErrorCode(err);
  const where = safeTarget(url);
  switch (code) {
    case 'ECONNREFUSED':
      return `cannot connect to Postgres at ${where}: connection refused (is Postgres running?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve the Postgres host of ${where}`;
    case 'ETIMEDOUT':
      return `timed out connecting to Postgres at ${where}`;
    case '28P01':
    case '28000':
      return `Postgres refused the login for ${where}: ${(err as Error).message}`;
    case PG.invalidCatalogName:
      return `database missing at ${where}: ${(err as Error).message}`;
    default:
      if (err instanceof Error && /timeout expired|Connection terminated/i.test(err.message)) {
        return `cannot connect to Postgres at ${where}: ${err.message}`;
      }
      return undefined;
  }
}

/** user@host:port/db without the password, for messages. */
export function safeTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return '(unparsable database URL)';
  }
}
