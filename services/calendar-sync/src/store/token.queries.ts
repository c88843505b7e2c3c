import { sql } from 'drizzle-orm';
import type { Db } from '@sched/db';
import type { ConnectionRef, StoredTokens, TokenChange, TokenRows } from '../domain/ports';

interface TokenRow extends Record<string, unknown> {
  password_sealed: string;
  access_token_sealed: string | null;
  access_token_expires_at: string | Date | null;
  refresh_token_sealed: string | null;
}

function fromRow(r: TokenRow): StoredTokens {
  return {
    passwordSealed: r.password_sealed,
    accessTokenSealed: r.access_token_sealed,
    accessTokenExpiresAt: r.access_token_expires_at === null ? null : new Date(r.access_token_expires_at),
    refreshTokenSealed: r.refresh_token_sealed,
  };
}

const STATE = (conn: ConnectionRef) => sql`
  SELECT c.password_sealed, t.access_token_sealed, t.access_token_expires_at, t.refresh_token_sealed
    FROM calendar_sync.calendar_connections c
    LEFT JOIN calendar_sync.connection_tokens t ON t.connection_id = c.id
   WHERE c.id = ${conn.id} AND c.workspace_id = ${conn.workspaceId} AND c.host_id = ${conn.hostId}`;

/**
 * OAuth token state in `connection_tokens`. The lock is that table's row (made on first use), never
 * the connection row: a transaction updating the connection (a write's host-details update, a status
 * change) neither waits for a token refresh nor makes one wait.
 */
export function createTokenRows(db: Db): TokenRows {
  return {
    async read(conn) {
      const res = await db.execute<TokenRow>(STATE(conn));
      return res.rows[0] ? fromRow(res.rows[0]) : null;
    },
    whileLocked(conn, lockTimeoutMs, fn) {
      return db.transaction(async (tx) => {
        await tx.execute(sql`SELECT set_config('lock_timeout', ${`${Math.max(1, Math.round(lockTimeoutMs))}ms`}, true)`);
        // The row to lock: created for the connection (only if it exists, in this workspace) on first use.
        await tx.execute(sql`
          INSERT INTO calendar_sync.connection_tokens (connection_id, workspace_id, host_id)
          SELECT c.id, c.workspace_id, c.host_id FROM calendar_sync.calendar_connections c
           WHERE c.id = ${conn.id} AND c.workspace_id = ${conn.workspaceId} AND c.host_id = ${conn.hostId}
          ON CONFLICT (connection_id) DO NOTHING`);
        const locked = await tx.execute(sql`
          SELECT 1 FROM calendar_sync.connection_tokens
           WHERE connection_id = ${conn.id} AND workspace_id = ${conn.workspaceId}
             FOR UPDATE`);
        const res = locked.rows.length > 0 ? await tx.execute<TokenRow>(STATE(conn)) : { rows: [] as TokenRow[] };
        const state = res.rows[0] ? fromRow(res.rows[0]) : null;
        const save = async (change: TokenChange): Promise<void> => {
          await tx.execute(sql`
            UPDATE calendar_sync.connection_tokens
               SET access_token_sealed = ${change.accessTokenSealed},
                   access_token_expires_at = ${change.accessTokenExpiresAt?.toISOString() ?? null}::timestamptz,
                   refresh_token_sealed = ${change.refreshTokenSealed},
                   refreshed_at = now()
             WHERE connection_id = ${conn.id} AND workspace_id = ${conn.workspaceId}`);
        };
        return fn(state, save);
      });
    },
  };
}
