import { isIP } from 'node:net';

/**
 * Where this system may open connections to on a customer's behalf (webhook receivers, CalDAV
 * servers): the SSRF guard of docs/security.md, "Outbound address policy". In production mode only
 * public unicast addresses; local mode (development and tests) also allows loopback, nothing else.
 */
export type AddressMode = 'local' | 'production';

/** Production when NODE_ENV=production, else local: the default of WEBHOOK_MODE and CALENDAR_MODE. */
export function defaultAddressMode(nodeEnv: string | undefined): AddressMode {
  return nodeEnv === 'production' ? 'production' : 'local';
}

type Cidr = readonly [base: number, bits: number];

// IPv4 ranges that are never a customer's public server: "this network" (0.0.0.0 reaches this host),
// private, CGNAT, link-local (cloud metadata 169.254.169.254), IETF protocol assignments,
// documentation, the 6to4 relay anycast, benchmarking, multicast, reserved and broadcast.
const FORBIDDEN_V4: readonly Cidr[] = [
  [v4('0.0.0.0'), 8],
  [v4('10.0.0.0'), 8],
  [v4('100.64.0.0'), 10],
  [v4('169.254.0.0'), 16],
  [v4('172.16.0.0'), 12],
  [v4('192.0.0.0'), 24],
  [v4('192.0.2.0'), 24],
  [v4('192.88.99.0'), 24],
  [v4('192.168.0.0'), 16],
  [v4('198.18.0.0'), 15],
  [v4('198.51.100.0'), 24],
  [v4('203.0.113.0'), 24],
  [v4('224.0.0.0'), 4],
  [v4('240.0.0.0'), 4],
];
const LOOPBACK_V4: Cidr = [v4('127.0.0.0'), 8];

/** A dotted quad as a number (callers pass only what isIP accepted as IPv4). */
function v4(address: string): number {
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inV4(ip: number, [base, bits]: Cidr): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(ip / size) === Math.floor(base / size);
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, a dotted IPv4 tail expanded). */
function v6Groups(address: string): number[] | null {
  let s = address.split('%')[0]!.toLowerCase();
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const n = v4(tail[1]!);
    s = `${s.slice(0, -tail[1]!.length)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head, rest] = s.split('::');
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const fill = s.includes('::') ? 8 - left.length - right.length : 0;
  const groups = [...left, ...Array<string>(fill).fill('0'), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function v4Allowed(n: number, mode: AddressMode): boolean {
  if (inV4(n, LOOPBACK_V4)) return mode === 'local';
  return !FORBIDDEN_V4.some((cidr) => inV4(n, cidr));
}

/**
 * IPv6. Every form that carries an IPv4 address is judged by that address: a socket (or a NAT64 or
 * 6to4 gateway) reaching `64:ff9b::a9fe:a9fe` reaches 169.254.169.254. Only the IPv4-mapped form
 * (`::ffff:127.0.0.1`, which a dual-stack socket turns into the IPv4 address itself) can be loopback;
 * the others embed it at most as a public address. Forms whose IPv4 part cannot be located (the
 * local-use NAT64 prefix 64:ff9b:1::/48, whose operator picks the prefix length) or is obfuscated
 * (Teredo 2001::/32) are refused outright.
 */
function v6Allowed(g: number[], mode: AddressMode): boolean {
  const zeroPrefix = (count: number) => g.slice(0, count).every((x) => x === 0);
  const low32 = g[6]! * 65536 + g[7]!;
  if (zeroPrefix(7) && g[7] === 1) return mode === 'local'; // ::1
  if (zeroPrefix(8)) return false; // :: unspecified
  if (zeroPrefix(5) && g[5] === 0xffff) return v4Allowed(low32, mode); // ::ffff:a.b.c.d IPv4-mapped
  if (zeroPrefix(4) && g[4] === 0xffff && g[5] === 0) return v4Allowed(low32, 'production'); // ::ffff:0:a.b.c.d IPv4-translated (SIIT)
  if (zeroPrefix(6)) return v4Allowed(low32, 'production'); // ::a.b.c.d IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4Allowed(low32, 'production'); // NAT64 64:ff9b::/96
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return false; // local-use NAT64 64:ff9b:1::/48
  if (g[0] === 0x2002) return v4Allowed(g[1]! * 65536 + g[2]!, 'production'); // 6to4 2002:AABB:CCDD::/48
  const first = g[0]!;
  if (first === 0x2001 && g[1] === 0) return false; // Teredo 2001::/32
  if (first === 0x2001 && g[1] === 0x0002 && g[2] === 0) return false; // benchmarking 2001:2::/48
  if (first === 0x2001 && g[1] === 0x0db8) return false; // documentation 2001:db8::/32
  if (first === 0x3fff && (g[1]! & 0xf000) === 0) return false; // documentation 3fff::/20 (RFC 9637)
  if ((first & 0xfe00) === 0xfc00) return false; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return false; // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return false; // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return false; // ff00::/8 multicast
  if (first === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return false; // 100::/64 discard
  if (zeroPrefix(1)) return false; // ::/16 (reserved; the forms above that live there were judged already)
  return true;
}

/**
 * An IP literal in any spelling URL parsing accepts, as the canonical address; null for a name.
 * `0x7f000001`, `2130706433`, `0177.0.0.1` and `127.1` are all 127.0.0.1; `[::ffff:127.0.0.1]`
 * and `::ffff:7f00:1` are the same IPv6 address. getaddrinfo accepts these spellings too, so a
 * check of the literal must see what the socket will reach.
 */
export function canonicalAddress(host: string): string | null {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const zoneless = bare.split('%')[0]!;
  if (isIP(zoneless) === 6) return bare.toLowerCase();
  if (isIP(zoneless) === 4) return zoneless;
  if (bare.includes(':')) return null;
  try {
    // The WHATWG host parser turns every IPv4 spelling into a dotted quad and leaves names alone.
    const parsed = new URL(`http://${bare}/`).hostname;
    return isIP(parsed) === 4 ? parsed : null;
  } catch {
    return null;
  }
}

/** Whether an address (in any spelling canonicalAddress reads) may be connected to in this mode. Anything unparsable is refused. */
export function isAllowedAddress(address: string, mode: AddressMode): boolean {
  const canonical = canonicalAddress(address);
  if (canonical === null) return false;
  const zoneless = canonical.split('%')[0]!;
  if (isIP(zoneless) === 4) return v4Allowed(v4(zoneless), mode);
  const groups = v6Groups(zoneless);
  return groups !== null && v6Allowed(groups, mode);
}

/**
 * `localhost`, `*.localhost` (RFC 6761: always loopback, often answered without DNS) with or
 * without the trailing dot. Refused by name in production mode, before any lookup.
 */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
