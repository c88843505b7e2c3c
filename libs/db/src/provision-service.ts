import { escapeLiteral, type ClientBase } from 'pg';
import { isDuplicateError } from './pg-errors';
import { quoteIdent, type ServiceDbNames } from './services';

/** Extensions the services' raw SQL relies on (exclusion constraints, digests). Created by the admin, in `public`. */
export const EXTENSIONS = ['btree_gist', 'pgcrypto'] as const;

/**
 * Creates the service's login role or brings an existing one back to the intended
 * attributes, sets its password when given and its search_path. Roles are
 * cluster-wide: call this under the cluster lock. Returns true when it created the role.
 */
export async function ensureRole(client: ClientBase, names: ServiceDbNames, password?: string): Promise<boolean> {
  const role = quoteIdent(names.role);
  const found = await client.query<{ ok: boolean }>(
    `SELECT rolcanlogin AND NOT rolsuper AND NOT rolcreatedb AND NOT rolcreaterole AS ok FROM pg_roles WHERE rolname = $1`,
    [names.role],
  );
  let created = false;
  if (found.rowCount === 0) {
    try {
      await client.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
      created = true;
    } catch (err) {
      if (!isDuplicateError(err)) throw err;
    }
  } else if (!found.rows[0]?.ok) {
    await client.query(`ALTER ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
  }
  if (password !== undefined) await setPassword(client, role, password);
  await ensureSearchPath(client, names);
  return created;
}

/** ALTER ROLE cannot take a bind parameter; statement logging is switched off so the password stays out of the server log. */
async function setPassword(client: ClientBase, quotedRole: string, password: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL log_statement = 'none'`);
    await client.query(`SET LOCAL log_min_duration_statement = -1`);
    await client.query(`ALTER ROLE ${quotedRole} PASSWORD ${escapeLiteral(password)}`);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

/**
 * The role sees its own schema first; `public` stays on the path because the
 * extensions (btree_gist, pgcrypto functions) live there. Only written when different,
 * so a second run changes nothing.
 */
async function ensureSearchPath(client: ClientBase, names: ServiceDbNames): Promise<void> {
  const wanted = `search_path=${names.schema}, public`;
  const current = await client.query<{ setconfig: string[] | null }>(
    `SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
      WHERE r.rolname = $1 AND s.setdatabase = 0`,
    [names.role],
  );
  const entries = current.rows[0]?.setconfig ?? [];
  if (entries.some((e) => e.replace(/"/g, '') === wanted)) return;
  await client.query(`ALTER ROLE ${quoteIdent(names.role)} SET search_path = ${quoteIdent(names.schema)}, public`);
}

/**
 * Creates the schema owned by the service role (or hands an existing one to it) and
 * closes it to everyone else: other service roles get no USAGE, so they cannot read it.
 * Returns true when it created the schema.
 */
export async function ensureSchema(client: ClientBase, names: ServiceDbNames): Promise<boolean> {
  const schema = quoteIdent(names.schema);
  const role = quoteIdent(names.role);
  const found = await client.query<{ owner: string }>(
    `SELECT pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname = $1`,
    [names.schema],
  );
  let created = false;
  if (found.rowCount === 0) {
    await client.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
    created = true;
  } else if (found.rows[0]?.owner !== names.role) {
    await client.query(`ALTER SCHEMA ${schema} OWNER TO ${role}`);
  }
  await client.query(`REVOKE ALL ON SCHEMA ${schema} FROM PUBLIC`);
  return created;
}

/** Service roles are not superusers and cannot create extensions themselves, so the admin does it first. */
export async function ensureExtensions(client: ClientBase): Promise<void> {
  const found = await client.query<{ extname: string }>('SELECT extname FROM pg_extension WHERE extname = ANY($1)', [[...EXTENSIONS]]);
  const present = new Set(found.rows.map((r) => r.extname));
  for (const ext of EXTENSIONS) {
    if (present.has(ext)) continue;
    try {
      await client.query(`CREATE EXTENSION IF NOT EXISTS ${quoteIdent(ext)} WITH SCHEMA public`);
    } catch (err) {
      if (!isDuplicateError(err)) throw err;
    }
  }
}
