// `npm test`: set up what is missing, then lint, type check, deployment manifests and every test suite, in that order.
// Prints a closing `tests: N passed, N failed` line so a run that executed no test is visible.
// A run leaves the git work tree as it found it (tests write under .data/ only): under CI=true a dirty
// tree after the run fails it; elsewhere the files the run changed are listed as a warning.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args, opts = {}) => {
  console.log(`\n> ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  return r.status ?? 1;
};

/** `git status` entries (path → status and content hash), or null outside a git work tree (e.g. an unpacked tarball). */
const treeState = () => {
  const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: root, encoding: 'utf8' });
  if (status.status !== 0) return null;
  const entries = status.stdout.split('\n').filter(Boolean).map((line) => ({ xy: line.slice(0, 2), path: line.slice(3).split(' -> ').pop() }));
  const present = entries.filter((e) => existsSync(join(root, e.path)));
  const hashes = spawnSync('git', ['hash-object', '--stdin-paths'], { cwd: root, encoding: 'utf8', input: present.map((e) => e.path).join('\n') }).stdout.split('\n');
  present.forEach((e, i) => (e.xy += ` ${hashes[i]}`));
  return new Map(entries.map((e) => [e.path, e.xy]));
};
const treeBefore = treeState();

if (run('bash', ['scripts/ensure-infra.sh']) !== 0) process.exit(1);
for (const step of ['lint', 'typecheck', 'deploy:check']) {
  if (run('pnpm', ['run', '-s', step]) !== 0) {
    console.error(`\nnpm test: ${step} failed`);
    process.exit(1);
  }
}

mkdirSync(join(root, '.data'), { recursive: true });
// The contract test's per-worker tallies (libs/openapi contract-check) start empty each run.
rmSync(join(root, '.data', 'contract'), { recursive: true, force: true });
// Unit and integration suites first, then the whole system as separate processes (tests-e2e).
const suites = [
  { name: 'unit+integration', args: [] },
  { name: 'e2e', args: ['-c', 'tests-e2e/jest.config.js'] },
  // pnpm test:fuzz and pnpm test:resilience (issue 10): hostile input over every operation, and faults
  // (broker, Postgres, provider, crashes) on private PostgreSQL/RabbitMQ instances.
  { name: 'fuzz', args: ['-c', 'tests-e2e/fuzz/jest.config.js'] },
  { name: 'resilience', args: ['-c', 'tests-e2e/resilience/jest.config.js'] },
];
let passed = 0;
let failed = 0;
let status = 0;
for (const suite of suites) {
  const results = join(root, '.data', `jest-${suite.name}.json`);
  const extra = process.argv.slice(2);
  // A pattern given on the command line may match files of one suite only.
  const code = run('pnpm', ['exec', 'jest', ...suite.args, '--json', `--outputFile=${results}`, ...(extra.length ? ['--passWithNoTests', ...extra] : [])]);
  status ||= code;
  if (existsSync(results)) {
    const r = JSON.parse(readFileSync(results, 'utf8'));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
  }
}
const contractDir = join(root, '.data', 'contract');
const outcomes = existsSync(contractDir) ? readdirSync(contractDir).flatMap((f) => readFileSync(join(contractDir, f), 'utf8').split('\n').filter(Boolean)) : [];
console.log(`\ncontract: ${outcomes.length} responses checked against the OpenAPI document, ${outcomes.filter((o) => o !== 'ok').length} mismatches`);
console.log(`\ntests: ${passed} passed, ${failed} failed`);
if (passed + failed === 0) {
  console.error('npm test: no test ran');
  process.exit(1);
}
const treeAfter = treeBefore && treeState();
if (treeAfter) {
  const ci = process.env.CI === 'true';
  // CI starts from a clean checkout: any entry is the run's doing. Elsewhere compare with the start.
  const dirty = [...treeAfter.keys()].filter((p) => ci || treeAfter.get(p) !== treeBefore.get(p));
  dirty.push(...[...treeBefore.keys()].filter((p) => !ci && !treeAfter.has(p)));
  if (dirty.length > 0) {
    console.error(`\nnpm test: the run ${ci ? 'left the work tree dirty' : 'changed files in the work tree'} (tests write under .data/; \`pnpm screenshots\`, \`pnpm docs:resilience\`, \`pnpm openapi\` and \`pnpm bench\` update docs/):`);
    for (const p of dirty) console.error(`  ${p}`);
    if (ci) process.exit(1);
  }
}
process.exit(status);
