import { DomainError, newId } from '@sched/contracts';
import { generateApiKey, hashApiKey, keyHint, type KeyMode } from './api-key';

export interface Workspace {
  id: string;
  name: string;
  slug: string;
  mode: KeyMode;
  createdAt: Date;
}

export interface ApiKey {
  id: string;
  workspaceId: string;
  name: string;
  keyHint: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  rateLimit: number | null;
  rateWindowSeconds: number | null;
}

/** What the admin use cases need from storage; implemented in store/. */
export interface AdminStore {
  /** Null when the slug is already taken. */
  insertWorkspace(p: { id: string; name: string; slug: string; mode: KeyMode }): Promise<Workspace | null>;
  findWorkspace(id: string): Promise<Workspace | null>;
  findWorkspaceBySlug(slug: string): Promise<Workspace | null>;
  insertApiKey(p: Omit<ApiKey, 'createdAt' | 'revokedAt'> & { keyHash: string }): Promise<ApiKey>;
  listApiKeys(workspaceId: string): Promise<ApiKey[]>;
  revokeApiKey(workspaceId: string, id: string, now: Date): Promise<ApiKey | null>;
}

/** Path segments of the booking page itself (/book/i/…, /book/api/…, /book/assets/…): never a workspace slug. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['i', 'api', 'assets']);

/** `Acme Corp.` → `acme-corp`; a name with no usable characters gives `workspace`. */
export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return s || 'workspace';
}

/**
 * A given slug must be free (409? no contract code fits: 400 on `slug` with issue `taken`). Without
 * one, the name's slug is used, with a short random suffix when that is taken.
 */
export async function createWorkspace(store: AdminStore, input: { name: string; slug?: string; mode?: KeyMode }): Promise<Workspace> {
  const id = newId('wsp');
  const mode = input.mode ?? 'live';
  if (input.slug) {
    if (RESERVED_SLUGS.has(input.slug)) {
      throw new DomainError('invalid_request', { message: 'The slug is reserved.', details: [{ field: 'slug', issue: 'reserved' }] });
    }
    const ws = await store.insertWorkspace({ id, name: input.name, slug: input.slug, mode });
    if (!ws) throw new DomainError('invalid_request', { message: 'The slug is already in use.', details: [{ field: 'slug', issue: 'taken' }] });
    return ws;
  }
  const base = slugify(input.name);
  for (let attempt = 0; attempt < 5; attempt++) {
    const slug = attempt === 0 && !RESERVED_SLUGS.has(base) ? base : `${base}-${id.slice(-(4 + attempt)).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
    const ws = await store.insertWorkspace({ id, name: input.name, slug, mode });
    if (ws) return ws;
  }
  throw new DomainError('internal_error');
}

export async function getWorkspaceBySlug(store: AdminStore, slug: string): Promise<Workspace> {
  const ws = await store.findWorkspaceBySlug(slug);
  if (!ws) throw new DomainError('not_found');
  return ws;
}

export async function getWorkspace(store: AdminStore, id: string): Promise<Workspace> {
  const ws = await store.findWorkspace(id);
  if (!ws) throw new DomainError('not_found');
  return ws;
}

export interface CreateApiKeyInput {
  name: string;
  scopes: string[];
  expires_at?: Date | null;
  rate_limit?: { limit: number; window_seconds: number } | null;
}

/** Makes a key, stores only its hash, and returns the key once alongside the stored record. */
export async function createApiKey(
  store: AdminStore,
  workspaceId: string,
  input: CreateApiKeyInput,
  now: Date,
): Promise<{ apiKey: ApiKey; key: string }> {
  const ws = await getWorkspace(store, workspaceId);
  if (input.expires_at && input.expires_at.getTime() <= now.getTime()) {
    throw new DomainError('invalid_request', { details: [{ field: 'expires_at', issue: 'out_of_range' }] });
  }
  const key = generateApiKey(ws.mode);
  const apiKey = await store.insertApiKey({
    id: newId('key'),
    workspaceId,
    name: input.name,
    keyHash: hashApiKey(key),
    keyHint: keyHint(key),
    scopes: [...new Set(input.scopes)],
    expiresAt: input.expires_at ?? null,
    rateLimit: input.rate_limit?.limit ?? null,
    rateWindowSeconds: input.rate_limit?.window_seconds ?? null,
  });
  return { apiKey, key };
}

export async function revokeApiKey(store: AdminStore, workspaceId: string, keyId: string, now: Date): Promise<ApiKey> {
  await getWorkspace(store, workspaceId);
  const key = await store.revokeApiKey(workspaceId, keyId, now);
  if (!key) throw new DomainError('not_found');
  return key;
}

export async function listApiKeys(store: AdminStore, workspaceId: string): Promise<ApiKey[]> {
  await getWorkspace(store, workspaceId);
  return store.listApiKeys(workspaceId);
}
