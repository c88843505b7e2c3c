import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { COMMANDS, EXIT_API_ERROR, EXIT_OK, EXIT_USAGE } from '../src';
import { runAgainst, startStubServer, type StubServer } from './support/cli-harness';

let stub: StubServer;
beforeEach(async () => {
  stub = await startStubServer();
});
afterEach(async () => {
  await stub.close();
});

const run = (...argv: string[]) => runAgainst(stub, argv);

describe('--help', () => {
  it('the top-level help lists every command and exits 0; no command at all prints it and exits 2', async () => {
    const help = await run('--help');
    expect(help.code).toBe(EXIT_OK);
    for (const c of COMMANDS) expect(help.stdout).toContain(`  ${c.name} `);
    expect(help.stdout).toContain('Exit codes: 0 done, 1 API error, 2 usage error.');
    expect((await run()).code).toBe(EXIT_USAGE);
    expect((await run('help')).code).toBe(EXIT_OK);
  });

  it.each(COMMANDS.map((c) => [c.name]))('`%s --help` shows its usage, options and the global options, sends nothing and needs no token', async (name) => {
    const r = await runAgainst(stub, [...name.split(' '), '--help'], { env: { ADMIN_TOKEN: undefined } });
    expect(r.code).toBe(EXIT_OK);
    expect(r.stdout).toMatch(new RegExp(`^Usage: pnpm admin ${name}`));
    expect(r.stdout).toContain('Global options:');
    expect(r.stdout).toContain('--json');
    const spec = COMMANDS.find((c) => c.name === name)!;
    for (const o of spec.options) expect(r.stdout).toContain(`--${o.name}`);
    for (const a of spec.args ?? []) expect(r.stdout).toContain(`<${a.name}>`);
    expect(stub.requests).toHaveLength(0);
  });

  it('a group alone lists its subcommands (exit 0 with --help, 2 without)', async () => {
    const help = await run('webhook-endpoint', '--help');
    expect(help.code).toBe(EXIT_OK);
    expect(help.stdout).toContain('Usage: pnpm admin webhook-endpoint <create|list|update|delete|rotate-secret>');
    const bare = await run('dlq');
    expect(bare.code).toBe(EXIT_USAGE);
    expect(bare.stderr).toContain('dlq status');
  });
});

describe('usage errors exit 2 and say what is wrong', () => {
  it.each([
    [['nope'], 'error: unknown command "nope"'],
    [['workspace', 'delete'], 'error: unknown command "workspace delete"'],
    [['workspace', 'create'], 'error: --name is required'],
    [['workspace', 'create', '--name', 'A', '--colour', 'red'], "error: Unknown option '--colour'"],
    [['api-key', 'list'], 'error: --workspace is required (or set ADMIN_WORKSPACE)'],
    [['api-key', 'revoke', '-w', 'wsp_x'], 'error: missing <key_id>'],
    [['api-key', 'revoke', '-w', 'wsp_x', 'key_1', 'key_2'], 'error: unexpected argument "key_2"'],
    [['api-key', 'create', '-w', 'wsp_x', '--name', 'n', '--scopes', 'a', '--rate-limit', 'fast'], 'error: --rate-limit must be <requests>/<seconds>'],
    [['event-type', 'create', '-w', 'wsp_x', '--host', 'h', '--name', 'n', '--slug', 's', '--duration', '1.5', '--meeting-type', 'video'], 'error: --duration must be a whole number'],
    [['event-type', 'update', 'evt_1', '-w', 'wsp_x'], 'error: nothing to change'],
    [['schedule', 'set', '-w', 'wsp_x', '--host', 'h'], 'error: give the schedule with exactly one of --file <path> or --data <json>'],
    [['schedule', 'set', '-w', 'wsp_x', '--host', 'h', '--data', '{bad'], 'error: --data is not valid JSON'],
    [['webhook-endpoint', 'update', 'whe_1', '-w', 'wsp_x', '--enable', '--disable'], 'error: --enable and --disable exclude each other'],
    [['dlq', 'replay', 'booking', '--max', 'all'], 'error: --max must be a whole number'],
    [['calendar', 'connect', '-w', 'wsp_x', '--host', 'h', '--caldav-url', 'http://c', '--username', 'u'], 'error: a CalDAV password is required'],
  ])('%j', async (argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(EXIT_USAGE);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
    expect(stub.requests).toHaveLength(0);
  });

  it('points at the help of the command that failed', async () => {
    expect((await run('workspace', 'create')).stderr).toContain('Run `pnpm admin workspace create --help` for usage.');
  });

  it('no token anywhere is a usage error naming the three places to put one', async () => {
    const r = await runAgainst(stub, ['dlq', 'status'], { env: { ADMIN_TOKEN: undefined } });
    expect(r.code).toBe(EXIT_USAGE);
    expect(r.stderr).toContain('no admin token: pass --token, set ADMIN_TOKEN, or run `npm start` here (it writes .data/dev-secrets.json)');
  });
});

describe('connection settings', () => {
  it('reads ADMIN_TOKEN from ./.data/dev-secrets.json when the variable is unset; --token and --url win over everything', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'admin-cli-'));
    try {
      mkdirSync(path.join(dir, '.data'));
      writeFileSync(path.join(dir, '.data', 'dev-secrets.json'), JSON.stringify({ ADMIN_TOKEN: 'from-dev-secrets', SECRETS_KEY: 'x' }));
      stub.enqueue({ status: 200, body: { data: [], meta: {} } }, { status: 200, body: { data: [], meta: {} } });
      expect((await runAgainst(stub, ['dlq', 'status'], { cwd: dir, env: { ADMIN_TOKEN: undefined } })).code).toBe(EXIT_OK);
      expect(stub.requests[0]!.headers.authorization).toBe('Bearer from-dev-secrets');
      const r = await runAgainst(null, ['--url', stub.url, '--token', 'from-flag', 'dlq', 'status'], { cwd: dir, env: { ADMIN_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'from-env' } });
      expect(r.code).toBe(EXIT_OK);
      expect(stub.requests[1]!.headers.authorization).toBe('Bearer from-flag');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('API and connection errors exit 1', () => {
  it('prints the error code, status, message, each detail and the request id', async () => {
    stub.enqueue({
      status: 400,
      body: { error: { code: 'invalid_request', message: 'The request is invalid.', details: [{ field: 'slug', issue: 'invalid_format' }, { field: 'duration_minutes', issue: 'out_of_range' }] }, meta: {} },
    });
    const r = await run('event-type', 'create', '-w', 'wsp_x', '--host', 'h', '--name', 'n', '--slug', 'Bad Slug', '--duration', '0', '--meeting-type', 'video');
    expect(r.code).toBe(EXIT_API_ERROR);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: invalid_request (HTTP 400): The request is invalid.\n  - slug: invalid_format\n  - duration_minutes: out_of_range\nrequest id: req_stub_1\n');
  });

  it('a 401 adds a hint about the token; a non-envelope answer is still reported with its status', async () => {
    stub.enqueue({ status: 401, headers: { 'www-authenticate': 'Bearer' }, body: { error: { code: 'unauthenticated', message: 'A valid API key is required.', details: [] }, meta: {} } });
    const r = await run('dlq', 'status');
    expect(r.code).toBe(EXIT_API_ERROR);
    expect(r.stderr).toContain('hint: check the admin token');
    stub.enqueue({ status: 502, body: '<html>bad gateway</html>' });
    const r2 = await run('dlq', 'status');
    expect(r2).toMatchObject({ code: EXIT_API_ERROR });
    expect(r2.stderr).toContain("error: unexpected_response (HTTP 502): HTTP 502 without the API's JSON envelope");
  });

  it('connection refused says the gateway may not be running', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address() as AddressInfo;
    await new Promise<void>((r) => srv.close(() => r()));
    const r = await runAgainst(null, ['dlq', 'status'], { env: { ADMIN_URL: `http://127.0.0.1:${port}` } });
    expect(r.code).toBe(EXIT_API_ERROR);
    expect(r.stderr).toBe(`error: cannot reach the admin API at http://127.0.0.1:${port} (ECONNREFUSED): is the gateway running? (npm start)\n`);
  });
});

describe('the real entry point (tsx libs/admin-cli/src/main.ts)', () => {
  const root = path.resolve(__dirname, '../../..');
  const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
  const main = path.join(root, 'libs', 'admin-cli', 'src', 'main.ts');

  it('sets the process exit code: 0 for help, 2 for a usage error, 1 for an API error', async () => {
    const env = { ...process.env, ADMIN_URL: stub.url, ADMIN_TOKEN: 't' };
    expect(spawnSync(tsx, [main, '--help'], { env, encoding: 'utf8' }).status).toBe(0);
    expect(spawnSync(tsx, [main, 'workspace', 'create'], { env, encoding: 'utf8' }).status).toBe(2);
    stub.enqueue({ status: 404, body: { error: { code: 'not_found', message: 'The resource was not found.', details: [] }, meta: {} } });
    const child = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      // Async spawn: the stub server answers from this same process.
      const p = spawn(tsx, [main, 'delivery', 'replay', 'whd_x'], { env });
      let stderr = '';
      p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      p.on('close', (status) => resolve({ status, stderr }));
    });
    expect(child.status).toBe(1);
    expect(child.stderr).toContain('error: not_found (HTTP 404)');
  }, 30_000);
});
