import fc from 'fast-check';

/**
 * The hostile values the fuzz throws at every field, query parameter, path id and header.
 * None of them contains the words the stack-trace check looks for (SELECT, violates, "at (")
 * so an echo of caller input in a 400 can never be mistaken for a leak.
 */

const LONE_SURROGATES = ['\ud800', '\udfff', 'a\ud83dz', '\udc00\ud800'];
const NASTY = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u202eevil\u202c',
  'مرحبا بالعالم',
  'שלום',
  '𝕳𝖊𝖑𝖑𝖔 🙂👩‍👩‍👧',
  'e\u0301\u0301\u0301',
  '\ufeff',
  '\u2028\u2029',
  "Robert'); DROP TABLE bookings;--",
  '" OR "1"="1',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  '%00%2e%2e%2f',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '__proto__',
  'constructor',
  'true',
];

/** Any string, from short junk to unicode with lone surrogates. */
export const junkString = (maxLength = 200): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...NASTY, ...LONE_SURROGATES) },
    { weight: 2, arbitrary: fc.string({ maxLength: Math.min(maxLength, 40) }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: Math.min(maxLength, 40) }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: Math.min(maxLength, 40) }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: maxLength }).map((n) => 'x'.repeat(n)) },
  );

/** Strings up to and beyond the 64 KiB body limit (bodies only: a URL this long would hit Node's header limit). */
export const hugeString: fc.Arbitrary<string> = fc.constantFrom(1_000, 8_193, 65_000, 65_536, 70_000, 200_000).chain((n) =>
  fc.constantFrom('a'.repeat(n), 'é'.repeat(Math.ceil(n / 2)), '🙂'.repeat(Math.ceil(n / 4)), '\u0000'.repeat(n)),
);

const future = (days: number, h = 10): string => {
  const d = new Date(Date.now() + days * 86400000);
  d.setUTCHours(h, 0, 0, 0);
  return d.toISOString();
};

export const BAD_TIMESTAMPS = [
  '2026-02-30T10:00:00Z',
  '2027-02-29T10:00:00Z',
  '2026-11-22T24:00:00Z',
  '2026-12-31T23:59:60Z',
  '2026-06-30T23:59:60.500Z',
  '2026-11-22T10:00:00+01:00',
  '2026-11-22T10:00:00-00:00',
  '2026-11-22T10:00:00+14:00',
  '2026-11-22T10:00:00',
  '2026-11-22',
  '2026-11-22T10:00Z',
  '2026-13-01T10:00:00Z',
  '2026-00-10T10:00:00Z',
  '9999-12-31T23:59:59Z',
  '0000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '2026-11-22T10:00:00.1234567891Z',
  '2026-11-22t10:00:00z',
  '2026-11-22 10:00:00Z',
  '1763805600',
  '2026-11-22T10:00:00Z\u0000',
  '２０２６-11-22T10:00:00Z',
];

/** Well-formed and broken timestamps (offsets, impossible dates, 24:00, leap seconds). */
export const timestampValue = (extraGood: string[] = []): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(future(1), future(2, 9), future(30), future(-1), future(100).replace('.000Z', '+00:00'), ...extraGood) },
    { weight: 3, arbitrary: fc.constantFrom(...BAD_TIMESTAMPS) },
    { weight: 1, arbitrary: junkString(60) },
  );

/** Cursors: garbage, forged base64, too long, and (filled in later) real ones of other endpoints and tampered real ones. */
export const cursorValue = (real: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    junkString(100),
    fc.base64String({ minLength: 4, maxLength: 200 }),
    fc.constantFrom('eyJpZCI6ImJrZ194In0', 'eyJ0IjoiMjAyNi0xMS0yMiJ9.AAAA', 'x'.repeat(2049), 'x'.repeat(3000)),
    ...(real.length
      ? [fc.constantFrom(...real), fc.tuple(fc.constantFrom(...real), fc.nat()).map(([c, n]) => `${c.slice(0, n % c.length)}A${c.slice((n % c.length) + 1)}`)]
      : []),
  );

/** Any JSON value, for "wrong type" replacements. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, [], {}, [null], { a: 1 }, '1', ''),
  fc.integer(),
  fc.double(),
  junkString(40),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Field names that are not in any schema; a restricted alphabet so error details echo nothing odd. */
export const extraFieldName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('extra', 'id', 'workspace_id', 'status', 'version', 'created_at', '__proto__', 'constructor', 'admin'),
  fc.stringMatching(/^[a-z_]{1,20}$/),
);

/** Header values fetch can send (Latin-1, no CR/LF/NUL). */
export const headerJunk = (maxLength: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: Math.min(maxLength, 60) }),
    fc.constantFrom('', ' ', '\t', 'é', 'ÿÿÿ'),
    fc.integer({ min: 1, max: maxLength }).map((n) => 'k'.repeat(n)),
  );

/** Encodes a path segment even when it holds lone surrogates (as raw, invalid UTF-8 percent escapes). */
export function encodeSegment(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    let out = '';
    for (const ch of s) {
      try {
        out += encodeURIComponent(ch);
      } catch {
        const c = ch.charCodeAt(0);
        out += `%${(0xe0 | (c >> 12)).toString(16).toUpperCase()}%${(0x80 | ((c >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (c & 0x3f)).toString(16).toUpperCase()}`;
      }
    }
    return out;
  }
}

/** Serialises a body that may hold lone surrogates: JSON.stringify escapes them as \udXXX, which is valid JSON. */
export const toJson = (v: unknown): string => JSON.stringify(v) ?? 'null';
