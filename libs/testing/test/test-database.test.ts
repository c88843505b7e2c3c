import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from '../src';

const made: TestDatabase[] = [];
afterAll(async () => {
  for (const db of made) await db.drop();
});

async function make(...args: Parameters<typeof createTestDatabase>): Promise<TestDatabase> {
  const db = await createTestDatabase(...args);
  made.push(db);
  return db;
}

async function databaseExists(name: string): Promise<boolean> {
  const client = new Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    return ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

describe('createTestDatabase', () => {
  it('gives each caller its own database: rows written in one are not visible in the other', async () => {
    const [a, b] = await Promise.all([make({ services: ['booking'] }), make({ services: ['booking'] })]);
    expect(a.name).not.toBe(b.name);
    await a.pool('booking').query('CREATE TABLE booking.notes (body text)');
    await a.pool('booking').query(`INSERT INTO booking.notes VALUES ('only in a')`);

    expect((await a.pool('booking').query('SELECT body FROM notes')).rows).toEqual([{ body: 'only in a' }]);
    await expect(b.pool('booking').query('SELECT body FROM booking.notes')).rejects.toMatchObject({ code: '42P01' });
  });

  it("connects as the service's own role, which cannot read another service's schema", async () => {
    const db = await make({ services: ['booking', 'availability'] });
    const who = await db.pool('availability').query('SELECT current_user AS u, current_database() AS d');
    expect(who.rows).toEqual([{ u: 'svc_availability', d: db.name }]);
    expect(db.urlFor('booking')).toMatch(new RegExp(`^postgres://svc_booking@[^/]+/${db.name}$`));
    await expect(db.pool('availability').query('SELECT 1 FROM booking.__none')).rejects.toMatchObject({ code: '42501' });
    expect((await db.adminPool.query('SELECT current_user AS u')).rows[0].u).not.toMatch(/^svc_/);
  });

  it("applies the service's migrations from services/<name>/migrations", async () => {
    const journal = path.resolve(__dirname, '../../../services/gateway/migrations/meta/_journal.json');
    const expected = fs.existsSync(journal) ? (JSON.parse(fs.readFileSync(journal, 'utf8')) as { entries: unknown[] }).entries.length : 0;
    const db = await make({ services: ['gateway'] });
    const table = await db.adminPool.query(`SELECT to_regclass('gateway.__drizzle_migrations') IS NOT NULL AS exists`);
    const applied = table.rows[0].exists ? (await db.adminPool.query('SELECT count(*)::int AS n FROM gateway.__drizzle_migrations')).rows[0].n : 0;
    expect(applied).toBe(expected);
  });

  it('uses a migrations folder given by the test instead of the service one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-testing-'));
    try {
      fs.mkdirSync(path.join(dir, 'meta'));
      fs.writeFileSync(path.join(dir, 'meta/_journal.json'), JSON.stringify({ entries: [{ idx: 0, when: 1, tag: '0000_x', breakpoints: true }] }));
      fs.writeFileSync(path.join(dir, '0000_x.sql'), 'CREATE TABLE "invitation"."probe" ("id" int);');
      const db = await make({ services: ['invitation'], migrationsFolders: { invitation: dir } });
      expect((await db.pool('invitation').query('SELECT count(*)::int AS n FROM probe')).rows).toEqual([{ n: 0 }]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('drop() closes the pools and removes the database even with connections open; a second drop is harmless', async () => {
    const db = await createTestDatabase({ services: ['booking'] });
    const stray = new Client({ connectionString: db.urlFor('booking') });
    stray.on('error', () => undefined);
    await stray.connect();
    await db.pool('booking').query('SELECT 1');
    expect(await databaseExists(db.name)).toBe(true);

    await db.drop();
    await db.drop();
    expect(await databaseExists(db.name)).toBe(false);
    expect(() => db.pool('booking')).toThrow(/already dropped/);
    await stray.end().catch(() => undefined);
  });
});
