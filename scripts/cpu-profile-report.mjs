// Self time per package and per function, per unit (e.g. per Booking), of the .cpuprofile files in
// <dir>/<process>/ (<service> or <service>-worker; written by SYSTEM_PROFILE_DIR runs), optionally cut to an interval of the
// monotonic clock in µs (tests-e2e/bench/profile-bookings.ts prints it). docs/performance.md.
//   node scripts/cpu-profile-report.mjs <dir> <units> [<from µs> <to µs>] [--top N]
// The V8 profiler samples by wall clock: time a process spends descheduled inside a system call
// (writev, writeBuffer) shows up there; the per-process CPU from /proc is the figure to trust.
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
const [dir, unitsArg, fromArg, toArg] = args;
if (!dir || !unitsArg) {
  console.error('usage: node scripts/cpu-profile-report.mjs <dir> <units> [<from µs> <to µs>] [--top N]');
  process.exit(2);
}
const units = Number(unitsArg);
const from = fromArg ? Number(fromArg) : -Infinity;
const to = toArg ? Number(toArg) : Infinity;

const packageOf = (url, name) => {
  if (!url) return name;
  if (url.includes('node_modules')) return url.replace(/.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '').split('/').slice(0, url.includes('/@') ? 2 : 1).join('/');
  return url.startsWith('node:') ? url : path.basename(url);
};

for (const service of fs.readdirSync(dir)) {
  const folder = path.join(dir, service);
  if (!fs.statSync(folder).isDirectory()) continue;
  for (const file of fs.readdirSync(folder).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8'));
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map();
    let t = profile.startTime;
    profile.samples.forEach((id, i) => {
      t += profile.timeDeltas[i] ?? 0;
      if (t < from || t > to) return;
      self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
    });
    const byPackage = new Map();
    const byFunction = new Map();
    let busy = 0;
    for (const [id, us] of self) {
      const { functionName, url, lineNumber } = nodes.get(id).callFrame;
      const name = functionName || '(anonymous)';
      if (name === '(idle)') continue;
      busy += us;
      const pkg = packageOf(url, name);
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
      const fn = `${name} ${url ? `${path.basename(url)}:${lineNumber}` : ''}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    }
    const perUnit = (us) => (us / units).toFixed(0);
    console.log(`\n== ${service} (${file}): sampled busy ${(busy / 1000).toFixed(0)} ms = ${(busy / 1000 / units).toFixed(2)} ms per unit`);
    console.log(' by package (µs per unit):', [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, v]) => `${k} ${perUnit(v)}`).join(' | '));
    console.log(' top functions (µs per unit):');
    for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`   ${perUnit(v).padStart(6)}  ${k}`);
  }
}
