import { sql } from 'drizzle-orm';
import type { Db } from '@sched/db';
import type { OAuthProviderName, OAuthStates } from '../domain/ports';
import { oauthStates } from './schema';

interface StateRow extends Record<string, unknown> {
  state_hash: string;
  workspace_id: string;
  host_id: string;
  provider: OAuthProviderName;
  calendar_id: string | null;
  verifier_sealed: string;
  expires_at: string | Date;
}

/** Started OAuth connect flows in `oauth_states` (one row per state, pruned by retention after expiry). */
export function createOAuthStates(db: Db): OAuthStates {
  return {
    async save(state) {
      await db.insert(oauthStates).values({
        stateHash: state.stateHash,
        workspaceId: state.workspaceId,
        hostId: state.hostId,
        provider: state.provider,
        calendarId: state.calendarId,
        verifierSealed: state.verifierSealed,
        expiresAt: state.expiresAt,
      });
    },
    async consume(stateHash) {
      // One statement: of two callbacks racing with the same state, exactly one gets the row.
      const res = await db.execute<StateRow>(sql`
        UPDATE calendar_sync.oauth_states
           SET used_at = now()
         WHERE state_hash = ${stateHash} AND used_at IS NULL AND expires_at > now()
        RETURNING state_hash, workspace_id, host_id, provider, calendar_id, verifier_sealed, expires_at`);
      const r = res.rows[0];
      if (!r) return null;
      return {
        stateHash: r.state_hash,
        workspaceId: r.workspace_id,
        hostId: r.host_id,
        provider: r.provider,
        calendarId: r.calendar_id,
        verifierSealed: r.verifier_sealed,
        expiresAt: new Date(r.expires_at),
      };
    },
  };
}
