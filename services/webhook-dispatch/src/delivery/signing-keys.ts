import type { KeyObject } from 'node:crypto';
import type { SecretBox } from '@sched/secrets';
import { activeSecrets, signingKey } from '../domain/webhook-signing';
import type { ClaimedDelivery } from '../store/delivery-worker.queries';

/**
 * The HMAC keys that sign a delivery's attempts. Every attempt signs with its endpoint's secret: it is
 * unsealed (AES-256-GCM, about 0.1–0.2 ms of CPU) and turned into a key once, then taken from memory.
 * Entries are keyed by the endpoint and the sealed value (the associated data it was sealed with and the
 * ciphertext), so a rotated secret, or a value re-sealed under another key of the ring, is a new entry and
 * the old one ages out; the key ring is read once at start, so an entry never outlives the keys that
 * opened it. A value that fails to open is not remembered: it fails every time. At most `maxEntries` are
 * kept, the least recently used going first. The keys stay in this process's memory, where each attempt
 * needs them anyway; never logged, never written anywhere.
 */
export class SigningKeys {
  private readonly keys = new Map<string, KeyObject>();
  private readonly maxEntries: number;

  constructor(
    private readonly box: Pick<SecretBox, 'open'>,
    opts: { maxEntries?: number } = {},
  ) {
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /** The keys signing an attempt at `now`: the current secret's, and the previous one's during the rotation overlap (activeSecrets). */
  forAttempt(d: Pick<ClaimedDelivery, 'endpointId' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>, now: Date): KeyObject[] {
    const sealed = activeSecrets({ current: d.secretSealed, previous: d.previousSecretSealed, previousExpiresAt: d.previousSecretExpiresAt }, now);
    return sealed.map((s) => this.key(d.endpointId, s));
  }

  /** Entries held (tests). */
  get size(): number {
    return this.keys.size;
  }

  private key(endpointId: string, sealed: string): KeyObject {
    const id = `${endpointId}\u0000${sealed}`;
    const known = this.keys.get(id);
    if (known !== undefined) {
      this.keys.delete(id); // most recently used last
      this.keys.set(id, known);
      return known;
    }
    const key = signingKey(this.box.open(sealed, endpointId));
    this.keys.set(id, key);
    if (this.keys.size > this.maxEntries) this.keys.delete(this.keys.keys().next().value as string);
    return key;
  }
}
