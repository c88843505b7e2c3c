/** The same server URL pointing at another database (keeps user, password and query options). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** The same server and database, logging in as another role (password replaced or removed). */
export function withCredentials(url: string, user: string, password?: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = password === undefined ? '' : encodeURIComponent(password);
  return u.toString();
}

export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new Error('The database URL names no database');
  return name;
}
