// Turns a service's JSON log lines into one readable, prefixed line each for a terminal.
const COLORS = ['36', '35', '33', '32', '34', '31'];
const LEVEL = { error: '31', warn: '33', info: '32', http: '90', debug: '90' };
const SKIP = new Set(['level', 'message', 'service', 'timestamp']);

export function prettyLine(prefix, colorIndex, line, useColor = process.stdout.isTTY) {
  const c = (code, s) => (useColor ? `\x1b[${code}m${s}\x1b[0m` : s);
  const tag = c(COLORS[colorIndex % COLORS.length], prefix.padEnd(23));
  let obj;
  try {
    obj = JSON.parse(line);
  } catch {
    return `${tag} ${line}`;
  }
  if (!obj || typeof obj !== 'object') return `${tag} ${line}`;
  const time = typeof obj.timestamp === 'string' ? obj.timestamp.slice(11, 23) : '';
  const extras = Object.entries(obj)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${tag} ${c('90', time)} ${c(LEVEL[obj.level] ?? '0', String(obj.level ?? '').padEnd(5))} ${obj.message ?? ''}${extras ? ' ' + c('90', extras) : ''}`;
}
