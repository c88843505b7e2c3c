/** The driver's own message (drizzle wraps it in "Failed query: <the SQL>", which says little). */
export function errorText(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
