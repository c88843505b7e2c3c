import type { SealedColumns } from '@sched/secrets';
import { oauthStateAad, passwordAad, tokenAad } from '../domain/connection-status';

/**
 * Every value this service stores sealed (@sched/secrets), with the associated data it was sealed with,
 * for `pnpm admin secrets rotate` (http/secrets.routes.ts). A new sealed column must be added here.
 * The password column holds any provider credential (a CalDAV password, an OAuth refresh token);
 * connection_tokens holds an OAuth connection's access token and the refresh token that replaced it.
 */
export const SEALED_COLUMNS: readonly SealedColumns[] = [
  {
    table: 'calendar_sync.calendar_connections',
    key: 'id',
    columns: ['password_sealed'],
    aadColumns: ['workspace_id', 'host_id'],
    associatedData: (row) => passwordAad(String(row.workspace_id), String(row.host_id)),
  },
  {
    // OAuth connections' access token and rotated refresh token (providers/oauth/token-store.ts).
    table: 'calendar_sync.connection_tokens',
    key: 'connection_id',
    columns: ['access_token_sealed', 'refresh_token_sealed'],
    aadColumns: ['workspace_id', 'host_id'],
    associatedData: (row) => tokenAad(String(row.workspace_id), String(row.host_id)),
  },
  {
    // The PKCE verifier of a started OAuth connect flow (domain/calendar-oauth.ts), for its 10 minutes.
    table: 'calendar_sync.oauth_states',
    key: 'state_hash',
    columns: ['verifier_sealed'],
    aadColumns: ['workspace_id', 'host_id'],
    associatedData: (row) => oauthStateAad(String(row.workspace_id), String(row.host_id)),
  },
];
