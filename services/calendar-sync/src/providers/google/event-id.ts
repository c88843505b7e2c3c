/**
 * Google Calendar event ids chosen by the client must be base32hex ([a-v0-9]) and 5-1024 characters
 * long. The id of a Booking's event is its UID (`<booking_id>@scheduling-service`) in base32hex,
 * lowercase, unpadded: deterministic (a redelivered write lands on the same event) and reversible
 * (an event read back is recognised as this service's own by its id, whatever iCalUID Google gives it).
 */
const ALPHABET = '0123456789abcdefghijklmnopqrstuv';

export function googleEventId(uid: string): string {
  const bytes = Buffer.from(uid, 'utf8');
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** The UID an event id was made from by googleEventId; null for any id not in that form. */
export function uidFromGoogleEventId(id: string): string | null {
  if (!/^[a-v0-9]{5,1024}$/.test(id)) return null;
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of id) {
    value = (value << 5) | ALPHABET.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
      value &= (1 << bits) - 1;
    }
  }
  // Leftover bits must be the zero padding of an encoding, and the bytes valid UTF-8.
  if (value !== 0) return null;
  const text = Buffer.from(bytes).toString('utf8');
  return googleEventId(text) === id ? text : null;
}
