import { execFile } from 'node:child_process';
import path from 'node:path';
import { MigrateError, migrateServices, passwordsFromEnv, type MigrateServiceResult } from '../src';
import { adminQuery, bookingMigrations, tempResources, writeMigrations } from './temp-database.helper';

const temp = tempResources();
afterAll(() => temp.cleanup());

const REFUSED_URL = 'postgres://postgres:hunter2@127.0.0.1:1/scheduling';

describe('migrateServices (core of pnpm migrate)', () => {
  it('creates the database and migrates only the requested services, in the fixed order, reporting each', async () => {
    const db = temp.database();
    const servicesDir = temp.dir();
    bookingMigrations(path.join(servicesDir, 'booking', 'migrations'));
    const seen: MigrateServiceResult[] = [];
    await migrateServices({ adminUrl: db.url, servicesDir, only: ['booking', 'gateway'], onMigrated: (r) => seen.push(r) });
    await migrateServices({ adminUrl: db.url, servicesDir, only: ['booking'], onMigrated: (r) => seen.push(r) });

    expect(seen.map((r) => [r.service, r.applied])).toEqual([
      ['gateway', 0],
      ['booking', 2],
      ['booking', 0],
    ]);
    const schemas = await adminQuery(db.url, `SELECT nspname FROM pg_namespace WHERE nspname IN ('booking', 'gateway', 'availability') ORDER BY 1`);
    expect(schemas).toEqual([{ nspname: 'booking' }, { nspname: 'gateway' }]);
  });

  it('rejects an unknown service name before touching the database', async () => {
    await expect(migrateServices({ adminUrl: REFUSED_URL, servicesDir: '/nowhere', only: ['booking', 'bookings'] })).rejects.toThrow(
      new MigrateError('unknown service(s): bookings; expected one of gateway, booking, availability, invitation, calendar-sync, webhook-dispatch'),
    );
  });

  it('turns "Postgres is down" into a readable error without the password', async () => {
    const err = await migrateServices({ adminUrl: REFUSED_URL, servicesDir: '/nowhere' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrateError);
    expect((err as Error).message).toBe('cannot connect to Postgres at postgres@127.0.0.1:1/scheduling: connection refused (is Postgres running?)');
  });

  it("names the service and Postgres's reason when a migration's SQL is rejected", async () => {
    const db = temp.database();
    const servicesDir = temp.dir();
    writeMigrations(path.join(servicesDir, 'invitation', 'migrations'), [{ tag: '0000_bad', sql: ['CREATE TABLE invitation.x (id nosuchtype);'] }]);
    const err = await migrateServices({ adminUrl: db.url, servicesDir, only: ['invitation'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrateError);
    expect((err as MigrateError).service).toBe('invitation');
    expect((err as Error).message).toMatch(/^invitation: Postgres error 42704: type "nosuchtype" does not exist/);
  });

  it('reads DB_PASSWORD_<SERVICE> in upper snake case', () => {
    expect(passwordsFromEnv({ DB_PASSWORD_CALENDAR_SYNC: 'a', DB_PASSWORD_BOOKING: 'b', DB_PASSWORD_GATEWAY: '', OTHER: 'c' })).toEqual({
      'calendar-sync': 'a',
      booking: 'b',
    });
  });
});

describe('scripts/migrate.ts', () => {
  const root = path.resolve(__dirname, '../../..');
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(path.join(root, 'node_modules/.bin/tsx'), ['scripts/migrate.ts', ...args], { cwd: root, env: { ...process.env, ...env } }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
      );
    });

  it('exits 1 with one readable line and no stack when Postgres is unreachable', async () => {
    const out = await run([], { MIGRATE_DATABASE_URL: REFUSED_URL });
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe('migrate failed: cannot connect to Postgres at postgres@127.0.0.1:1/scheduling: connection refused (is Postgres running?)');
  });

  it('prints one progress line per requested service', async () => {
    const db = temp.database();
    const out = await run(['availability', 'gateway'], { MIGRATE_DATABASE_URL: db.url });
    expect(out.stderr).toBe('');
    expect(out.stdout).toMatch(/^migrate: gateway \.\.\. (\d+ applied|up to date)\nmigrate: availability \.\.\. (\d+ applied|up to date)\n$/);
    expect(out.code).toBe(0);
  });
});
