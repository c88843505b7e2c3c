import type { Pool } from 'pg';
import { createPool, startNotificationListener, type NotificationListener } from '../src';
import { SERVER_URL } from './temp-database.helper';
// By path: @sched/testing depends on this package.
import { waitFor } from '../../testing/src/wait-for';

const pools: Pool[] = [];
const listeners: NotificationListener[] = [];
afterAll(async () => {
  await Promise.all(listeners.map((l) => l.stop()));
  await Promise.all(pools.map((p) => p.end()));
});

function pool(): Pool {
  const p = createPool(SERVER_URL, { logger: { error: () => undefined }, max: 3 });
  pools.push(p);
  return p;
}

const until = (check: () => boolean) => waitFor(check, { intervalMs: 10 });

const channel = `listen_test_${process.pid}`;

describe('startNotificationListener', () => {
  it('delivers payloads of committed NOTIFYs only, and reports when it listens', async () => {
    const p = pool();
    const payloads: string[] = [];
    let listening = 0;
    const l = startNotificationListener({ pool: p, channel, onNotification: (x) => payloads.push(x), onListening: () => listening++, logger: { warn: () => undefined } });
    listeners.push(l);
    await until(() => l.isListening());
    expect(listening).toBe(1);

    const c = await p.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_notify($1, $2)', [channel, 'rolled-back']);
      await c.query('ROLLBACK');
      await c.query('BEGIN');
      await c.query('SELECT pg_notify($1, $2)', [channel, 'hst_1']);
      expect(payloads).toEqual([]); // not before the commit
      await c.query('COMMIT');
    } finally {
      c.release();
    }
    await until(() => payloads.length === 1);
    await p.query('SELECT pg_notify($1, $2)', [`${channel}_other`, 'elsewhere']);
    await p.query('SELECT pg_notify($1, $2)', [channel, '*']);
    await until(() => payloads.length === 2);
    expect(payloads).toEqual(['hst_1', '*']);
  });

  it('reports a lost connection, reconnects, and reports listening again', async () => {
    const p = pool();
    const events: string[] = [];
    const warnings: string[] = [];
    const l = startNotificationListener({
      pool: p,
      channel,
      retryMs: 50,
      onNotification: (x) => events.push(`n:${x}`),
      onListening: () => events.push('listening'),
      onLost: () => events.push('lost'),
      logger: { warn: (m) => warnings.push(m) },
    });
    listeners.push(l);
    await until(() => l.isListening());
    // Find the listener's backend by the LISTEN it holds and end it, as a Postgres restart would.
    await until(() => events.length === 1);
    const killer = pool();
    const { rows } = await killer.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid() AND application_name = current_setting('application_name')`,
      [`LISTEN "${channel}"`],
    );
    expect(rows.length).toBeGreaterThanOrEqual(1);
    await killer.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [rows.map((r) => r.pid)]);
    await until(() => events.filter((e) => e === 'listening').length === 2);
    expect(events.slice(0, 3)).toEqual(['listening', 'lost', 'listening']);
    // The broken connection reports both 'error' and 'end': one warning, one loss.
    expect(warnings.filter((w) => w === 'LISTEN connection lost; reconnecting')).toHaveLength(1);
    expect(events.filter((e) => e === 'lost')).toHaveLength(1);
    await killer.query('SELECT pg_notify($1, $2)', [channel, 'after-reconnect']);
    await until(() => events.includes('n:after-reconnect'));
  });

  it('stops listening on stop and reports nothing more', async () => {
    const p = pool();
    const payloads: string[] = [];
    let lost = 0;
    const l = startNotificationListener({ pool: p, channel, onNotification: (x) => payloads.push(x), onLost: () => lost++, logger: { warn: () => undefined } });
    // A listener still running hears what this one would have: once it has heard two later NOTIFYs, a late one would be here too.
    const heard: string[] = [];
    const witness = startNotificationListener({ pool: pool(), channel, onNotification: (x) => heard.push(x), logger: { warn: () => undefined } });
    listeners.push(witness);
    await until(() => l.isListening() && witness.isListening());
    await l.stop();
    expect(l.isListening()).toBe(false);
    await p.query('SELECT pg_notify($1, $2)', [channel, 'late']);
    await until(() => heard.includes('late'));
    await p.query('SELECT pg_notify($1, $2)', [channel, 'later']);
    await until(() => heard.includes('later'));
    expect(payloads).toEqual([]);
    expect(lost).toBe(0);
  });
});
