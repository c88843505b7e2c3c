import { NotifiedCache, type KeptInStep } from '@sched/db';
import type { SlotsCache, SlotsCacheTicket } from '../domain/slots-cache';

export interface SlotsCacheOptions {
  /** Longest life of an answer, counted from its ticket. */
  ttlMs: number;
  /** Bound on the summed size of the answers held (the bytes of their JSON). */
  maxBytes: number;
}

interface Answer {
  /** The UTF-8 bytes of the answer's JSON text: served as they are, request after request. */
  json: Buffer;
  expiresAt: number;
}

const answerBytes = (answer: Answer) => answer.json.length;

/**
 * Slots answers in memory, one group per host: the staying-in-step rules (serve only while LISTEN
 * is up, drop a host's answers on its NOTIFY, never store an answer whose host changed while it was
 * computed, least recently used out past `maxBytes`) are libs/db's NotifiedCache; this adds the
 * answer's life (TTL from its ticket, or its own expiry if sooner).
 */
export class NotifiedSlotsCache implements SlotsCache, KeptInStep {
  private readonly answers: NotifiedCache<string, Answer>;

  constructor(private readonly opts: SlotsCacheOptions) {
    this.answers = new NotifiedCache({ maxWeight: opts.maxBytes, weigh: answerBytes });
  }

  get size(): number {
    return this.answers.size;
  }

  get sizeBytes(): number {
    return this.answers.totalWeight;
  }

  isEnabled(): boolean {
    return this.answers.isEnabled() && this.opts.ttlMs > 0 && this.opts.maxBytes > 0;
  }

  get(key: string, now: number): Buffer | undefined {
    const answer = this.answers.get(key);
    if (answer === undefined) return undefined;
    if (now >= answer.expiresAt) {
      this.answers.delete(key);
      return undefined;
    }
    return answer.json;
  }

  ticket(key: string, now: number): SlotsCacheTicket {
    return { key, stamp: this.answers.stamp(), at: now };
  }

  /** An answer that took longer than the TTL to compute is never stored: its life counts from the ticket. */
  put(ticket: SlotsCacheTicket, hostId: string, json: Buffer, expiresAt: number, now: number): boolean {
    const answer: Answer = { json, expiresAt: Math.min(expiresAt, ticket.at + this.opts.ttlMs) };
    if (answer.expiresAt <= now) return false;
    return this.answers.put(ticket.key, answer, hostId, ticket.stamp);
  }

  stillValid(ticket: SlotsCacheTicket, now: number): boolean {
    return this.isEnabled() && ticket.stamp === this.answers.stamp() && now < ticket.at + this.opts.ttlMs;
  }

  /** Something the answers of `hostId` depend on changed. */
  invalidate(hostId: string): void {
    this.answers.invalidate(hostId);
  }

  invalidateAll(): void {
    this.answers.invalidateAll();
  }

  enable(): void {
    this.answers.enable();
  }

  disable(): void {
    this.answers.disable();
  }
}
