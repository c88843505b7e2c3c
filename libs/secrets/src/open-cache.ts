import type { SecretBox } from './index';

/**
 * A SecretBox whose `open` remembers what it opened, for a service that opens the same few sealed
 * values over and over (webhook-dispatch signs every attempt with its endpoint's secret; calendar-sync
 * uses a connection's credentials for every write and read): AES-GCM with a fresh decipher costs about
 * 0.1–0.2 ms of CPU each time, more than the rest of signing a webhook.
 *
 * The plaintext stays in this process's memory, where each use needs it anyway; never logged, never
 * written anywhere. Entries are keyed by the sealed value and its associated data, so a value sealed
 * again (a new secret, a rotation to another key) is a new entry and the old one ages out; the key
 * ring itself is read once at start (SECRETS_KEYS), so an entry never outlives the keys that opened it.
 * A value that fails to open is not remembered: it fails every time. At most `maxEntries` are kept,
 * the least recently used going first. `seal` is the box's own.
 */
export function withOpenCache(box: SecretBox, opts: { maxEntries?: number } = {}): SecretBox {
  const maxEntries = opts.maxEntries ?? 10_000;
  const opened = new Map<string, string>();
  return {
    get currentKeyId() {
      return box.currentKeyId;
    },
    get keyIds() {
      return box.keyIds;
    },
    seal: (plaintext, associatedData) => box.seal(plaintext, associatedData),
    open(sealed, associatedData = '') {
      const key = `${associatedData}\u0000${sealed}`;
      const known = opened.get(key);
      if (known !== undefined) {
        opened.delete(key); // most recently used last
        opened.set(key, known);
        return known;
      }
      const plaintext = box.open(sealed, associatedData);
      opened.set(key, plaintext);
      if (opened.size > maxEntries) opened.delete(opened.keys().next().value as string);
      return plaintext;
    },
  };
}
