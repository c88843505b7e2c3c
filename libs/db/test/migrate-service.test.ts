import path from 'node:path';
import { migrateService, withCredentials, type ServiceDbNames } from '../src';
import { adminQuery, bookingMigrations, randomName, SERVER_URL, tempResources, writeMigrations } from './temp-database.helper';

const temp = tempResources();
afterAll(() => temp.cleanup());

const asRole = async <T extends Record<string, unknown>>(dbUrl: string, role: string, sql: string): Promise<T[]> =>
  adminQuery<T>(withCredentials(dbUrl, role), sql);

const errorCode = (p: Promise<unknown>) => p.then(() => 'no error', (e: { code?: string }) => e.code);

describe('migrateService', () => {
  it('applies each migration once; a second run applies nothing and reports nothing created', async () => {
    const db = await temp.create();
    const folder = bookingMigrations(temp.dir());
    const first = await migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: folder });
    const second = await migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: folder });

    expect(first).toMatchObject({ service: 'booking', schema: 'booking', role: 'svc_booking', applied: 2, schemaCreated: true });
    expect(second).toMatchObject({ applied: 0, roleCreated: false, schemaCreated: false });
    const rows = await adminQuery<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM booking.__drizzle_migrations');
    expect(rows[0]!.n).toBe(2);
  });

  it('when two processes migrate the same service at once, both succeed and each migration is applied once', async () => {
    const db = await temp.create();
    const folder = bookingMigrations(temp.dir());
    const results = await Promise.all([1, 2].map(() => migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: folder })));

    expect(results.map((r) => r.applied).sort()).toEqual([0, 2]);
    const rows = await adminQuery<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM booking.__drizzle_migrations');
    expect(rows[0]!.n).toBe(2);
  });

  it('when a brand-new role is migrated into several databases at once, every run succeeds and the role is created once', async () => {
    const names: ServiceDbNames = { service: 'probe', schema: randomName('tsch_'), role: temp.role(randomName('t_role_')) };
    const dbs = await Promise.all([1, 2, 3].map(() => temp.create()));
    const folder = writeMigrations(temp.dir(), [{ tag: '0000_init', sql: [`CREATE TABLE "${names.schema}"."t" ("id" int);`] }]);
    const results = await Promise.all(dbs.map((db) => migrateService({ adminUrl: db.url, service: names, migrationsFolder: folder })));

    expect(results.map((r) => r.applied)).toEqual([1, 1, 1]);
    expect(results.filter((r) => r.roleCreated)).toHaveLength(1);
  });

  it("a service role cannot read another service's schema but can read and write its own", async () => {
    const db = await temp.create();
    await migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: bookingMigrations(temp.dir()) });
    const hosts = writeMigrations(temp.dir(), [{ tag: '0000_init', sql: ['CREATE TABLE "availability"."hosts" ("id" int);'] }]);
    await migrateService({ adminUrl: db.url, service: 'availability', migrationsFolder: hosts });

    expect(await errorCode(asRole(db.url, 'svc_availability', 'SELECT * FROM booking.things'))).toBe('42501');
    expect(await errorCode(asRole(db.url, 'svc_booking', 'SELECT * FROM availability.hosts'))).toBe('42501');
    await asRole(db.url, 'svc_booking', `INSERT INTO things (resource, during) VALUES ('r1', '[2030-01-01 10:00Z,2030-01-01 11:00Z)')`);
    expect(await asRole(db.url, 'svc_booking', 'SELECT resource FROM booking.things')).toEqual([{ resource: 'r1' }]);
    expect(await asRole(db.url, 'svc_availability', 'SELECT count(*)::int AS n FROM hosts')).toEqual([{ n: 0 }]);
  });

  it('every object belongs to the service role, which keeps no right to create schemas', async () => {
    const db = await temp.create();
    await migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: bookingMigrations(temp.dir()) });

    const owners = await adminQuery<{ name: string; owner: string }>(
      db.url,
      `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'booking' ORDER BY 1`,
    );
    expect(owners.map((o) => o.name)).toEqual(expect.arrayContaining(['__drizzle_migrations', 'things', 'things_no_overlap', 'things_resource_idx']));
    expect(new Set(owners.map((o) => o.owner))).toEqual(new Set(['svc_booking']));
    const schema = await adminQuery(db.url, `SELECT pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname = 'booking'`);
    expect(schema).toEqual([{ owner: 'svc_booking' }]);
    const role = await adminQuery(SERVER_URL, `SELECT rolcanlogin, rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = 'svc_booking'`);
    expect(role).toEqual([{ rolcanlogin: true, rolsuper: false, rolcreatedb: false, rolcreaterole: false }]);
    expect(await errorCode(asRole(db.url, 'svc_booking', 'CREATE SCHEMA sneaky'))).toBe('42501');
    expect(await asRole(db.url, 'svc_booking', 'SHOW search_path')).toEqual([{ search_path: 'booking, public' }]);
  });

  it('a role left with CREATE on the database by an interrupted run loses it on the next run', async () => {
    const db = await temp.create();
    const folder = bookingMigrations(temp.dir());
    await migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: folder });
    await adminQuery(db.url, `GRANT CREATE ON DATABASE "${db.name}" TO svc_booking`);
    await migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: folder });
    expect(await errorCode(asRole(db.url, 'svc_booking', 'CREATE SCHEMA sneaky'))).toBe('42501');
  });

  it('the raw-SQL exclusion constraint works, so btree_gist was installed for the role', async () => {
    const db = await temp.create();
    await migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: bookingMigrations(temp.dir()) });
    const insert = (range: string) => asRole(db.url, 'svc_booking', `INSERT INTO things (resource, during) VALUES ('r1', '${range}')`);
    await insert('[2030-01-01 10:00Z,2030-01-01 11:00Z)');
    expect(await errorCode(insert('[2030-01-01 10:30Z,2030-01-01 11:30Z)'))).toBe('23P01');
  });

  it('with a missing or empty migrations folder it creates only the role and the schema', async () => {
    const db = await temp.create();
    const missing = await migrateService({ adminUrl: db.url, service: 'invitation', migrationsFolder: path.join(temp.dir(), 'nope') });
    const empty = await migrateService({ adminUrl: db.url, service: 'webhook-dispatch', migrationsFolder: temp.dir() });

    expect([missing.applied, empty.applied]).toEqual([0, 0]);
    const schemas = await adminQuery(
      db.url,
      `SELECT nspname, pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname IN ('invitation', 'webhook_dispatch') ORDER BY 1`,
    );
    expect(schemas).toEqual([
      { nspname: 'invitation', owner: 'svc_invitation' },
      { nspname: 'webhook_dispatch', owner: 'svc_webhook_dispatch' },
    ]);
  });

  it('a failing run applies none of the pending migrations (one transaction) and leaves the role without extra rights', async () => {
    const db = await temp.create();
    const folder = writeMigrations(temp.dir(), [
      { tag: '0000_ok', sql: ['CREATE TABLE "booking"."a" ("id" int);'] },
      { tag: '0001_bad', sql: ['CREATE TABLE "booking"."b" ("id" int);', 'CREATE TABLE oops syntax error;'] },
    ]);
    await expect(migrateService({ adminUrl: db.url, service: 'booking', migrationsFolder: folder })).rejects.toThrow();

    const tables = await adminQuery(db.url, `SELECT tablename FROM pg_tables WHERE schemaname = 'booking'`);
    expect(tables).toEqual([{ tablename: '__drizzle_migrations' }]);
    const recorded = await adminQuery(db.url, 'SELECT count(*)::int AS n FROM booking.__drizzle_migrations');
    expect(recorded).toEqual([{ n: 0 }]);
    const rights = await adminQuery(db.url, `SELECT has_database_privilege('svc_booking', current_database(), 'CREATE') AS ok`);
    expect(rights).toEqual([{ ok: false }]);
  });

  it('sets the role password when one is given', async () => {
    const db = await temp.create();
    const names: ServiceDbNames = { service: 'probe', schema: randomName('tsch_'), role: temp.role(randomName('t_role_')) };
    await migrateService({ adminUrl: db.url, service: names, migrationsFolder: temp.dir(), rolePassword: "pa'ss w0rd" });

    const rows = await adminQuery<{ set: boolean }>(SERVER_URL, 'SELECT rolpassword IS NOT NULL AS set FROM pg_authid WHERE rolname = $1', [names.role]);
    expect(rows).toEqual([{ set: true }]);
  });

  it('refuses role or schema names that are not plain identifiers', async () => {
    const db = temp.database();
    const names = { service: 'x', schema: 'ok', role: 'bad"; DROP ROLE postgres; --' };
    await expect(migrateService({ adminUrl: db.url, service: names, migrationsFolder: temp.dir() })).rejects.toThrow(/unsafe SQL identifier/);
  });
});

