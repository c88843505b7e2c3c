import { DomainError, newId, type PublicEventKind } from '@sched/contracts';
import { checkTargetUrl, isAllowedAddress, type AddressMode, type TargetRules } from '@sched/address-policy';
import { generateWebhookSecret } from './webhook-signing';

export interface Endpoint {
  id: string;
  workspaceId: string;
  url: string;
  events: PublicEventKind[];
  enabled: boolean;
  disabledReason: 'admin' | 'gone' | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What the endpoint use cases need from storage; implemented in store/. Every call is scoped by workspace. */
export interface EndpointStore {
  insert(p: { id: string; workspaceId: string; url: string; events: PublicEventKind[]; secretSealed: string }): Promise<Endpoint>;
  list(workspaceId: string): Promise<Endpoint[]>;
  find(workspaceId: string, id: string): Promise<Endpoint | null>;
  /** Disabling also fails the endpoint's pending deliveries, in the same transaction. */
  update(workspaceId: string, id: string, changes: { url?: string; events?: PublicEventKind[]; enabled?: boolean }): Promise<Endpoint | null>;
  delete(workspaceId: string, id: string): Promise<boolean>;
  /** The current secret becomes the previous one, signing until `previousExpiresAt`. */
  rotateSecret(workspaceId: string, id: string, secretSealed: string, previousExpiresAt: Date): Promise<Endpoint | null>;
}

/** Seals secrets at rest, bound to the endpoint id so a sealed value cannot be moved to another row. */
export interface SecretSealer {
  seal(secret: string, endpointId: string): string;
}

/** DNS for the creation-time check; rejects when the name does not resolve. */
export type ResolveHost = (host: string) => Promise<string[]>;

export interface EndpointDeps {
  store: EndpointStore;
  sealer: SecretSealer;
  resolveHost: ResolveHost;
  mode: AddressMode;
  rotationOverlapMs: number;
  now: () => Date;
}

/** Webhook bodies carry guests' personal data: https only in production mode (decisions.md §11). */
export const WEBHOOK_TARGET_RULES: TargetRules = { productionSchemes: ['https:'] };

const urlIssue = (issue: string) => new DomainError('invalid_request', { details: [{ field: 'url', issue }] });

/**
 * The target checks at registration: shape and scheme in every mode; in production mode the host
 * must also resolve, and to public addresses only (every one of them: a name with one private record
 * is refused). Sending checks again on every attempt, on the address it connects to.
 */
export async function assertTargetAllowed(url: string, deps: Pick<EndpointDeps, 'mode' | 'resolveHost'>): Promise<void> {
  const checked = checkTargetUrl(url, deps.mode, WEBHOOK_TARGET_RULES);
  if (!checked.ok) throw urlIssue(checked.problem);
  if (deps.mode !== 'production' || checked.target.ipLiteral) return;
  let addresses: string[];
  try {
    addresses = await deps.resolveHost(checked.target.host);
  } catch {
    throw urlIssue('unresolvable');
  }
  if (addresses.length === 0) throw urlIssue('unresolvable');
  if (!addresses.every((a) => isAllowedAddress(a, deps.mode))) throw urlIssue('address_not_allowed');
}

export async function createEndpoint(
  deps: EndpointDeps,
  workspaceId: string,
  input: { url: string; events: PublicEventKind[] },
): Promise<{ endpoint: Endpoint; secret: string }> {
  await assertTargetAllowed(input.url, deps);
  const id = newId('whe');
  const secret = generateWebhookSecret();
  const endpoint = await deps.store.insert({ id, workspaceId, url: input.url, events: input.events, secretSealed: deps.sealer.seal(secret, id) });
  return { endpoint, secret };
}

export async function getEndpoint(deps: Pick<EndpointDeps, 'store'>, workspaceId: string, id: string): Promise<Endpoint> {
  const endpoint = await deps.store.find(workspaceId, id);
  if (!endpoint) throw new DomainError('not_found');
  return endpoint;
}

export function listEndpoints(deps: Pick<EndpointDeps, 'store'>, workspaceId: string): Promise<Endpoint[]> {
  return deps.store.list(workspaceId);
}

export async function updateEndpoint(
  deps: EndpointDeps,
  workspaceId: string,
  id: string,
  changes: { url?: string; events?: PublicEventKind[]; enabled?: boolean },
): Promise<Endpoint> {
  // decisions.md §2 order: a 400 about the URL comes before a 404 about the endpoint.
  if (changes.url !== undefined) await assertTargetAllowed(changes.url, deps);
  const endpoint = await deps.store.update(workspaceId, id, changes);
  if (!endpoint) throw new DomainError('not_found');
  return endpoint;
}

export async function deleteEndpoint(deps: Pick<EndpointDeps, 'store'>, workspaceId: string, id: string): Promise<void> {
  if (!(await deps.store.delete(workspaceId, id))) throw new DomainError('not_found');
}

/** A new secret, shown once; the old one keeps signing (as a second signature) for the overlap window. */
export async function rotateEndpointSecret(deps: EndpointDeps, workspaceId: string, id: string): Promise<{ endpoint: Endpoint; secret: string }> {
  const secret = generateWebhookSecret();
  const previousExpiresAt = new Date(deps.now().getTime() + deps.rotationOverlapMs);
  const endpoint = await deps.store.rotateSecret(workspaceId, id, deps.sealer.seal(secret, id), previousExpiresAt);
  if (!endpoint) throw new DomainError('not_found');
  return { endpoint, secret };
}
