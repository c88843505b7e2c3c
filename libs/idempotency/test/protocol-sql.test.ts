import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { idempotencyProtocolSql } from '../src';

/**
 * The protocol has one text, the library's: every service whose migrations create an idempotency_keys table
 * also has, as one migration of its own, exactly idempotencyProtocolSql(its schema). A hand edit of that
 * migration (or a service that forgot it) fails here, not in production.
 */
const SERVICES = path.resolve(__dirname, '../../../services');

function migrationsOf(service: string): Array<{ file: string; text: string }> {
  const dir = path.join(SERVICES, service, 'migrations');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((file) => ({ file, text: readFileSync(path.join(dir, file), 'utf8') }));
}

const users = readdirSync(SERVICES).filter((s) => migrationsOf(s).some((m) => /CREATE TABLE "[a-z_]+"\."idempotency_keys"/.test(m.text)));

it('finds the services that keep idempotency keys', () => {
  expect(users).toEqual(expect.arrayContaining(['booking', 'invitation']));
});

it.each(users)('%s has the protocol functions as one migration, exactly as the library writes them', (service) => {
  const schema = /CREATE TABLE "([a-z_]+)"\."idempotency_keys"/.exec(migrationsOf(service).map((m) => m.text).join('\n'))![1]!;
  const expected = idempotencyProtocolSql(schema);
  const holding = migrationsOf(service).filter((m) => m.text.includes('FUNCTION "' + schema + '"."idempotency_claim"'));
  expect(holding.map((m) => m.file)).toHaveLength(1);
  expect(holding[0]!.text).toBe(expected);
});

it('refuses a schema name it would have to quote', () => {
  expect(() => idempotencyProtocolSql('a"; DROP')).toThrow();
});
