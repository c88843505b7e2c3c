/**
 * What invitation's queue costs per Booking made without an invitation, before and after routing keys
 * (libs/contracts eventRoutingKey): the same 1000 booking.created published under the bare key (what booking
 * published before: it reaches invitation's queue) and under booking.created.no_invitation (what it
 * publishes now: it does not), alternated in pairs. Counted: messages routed to invitation's queue,
 * invitation's consumer CPU to receive, parse, refuse (`accepts`) and ack them (this process, only the
 * consumer running), and RabbitMQ's CPU (beam, /proc; a shared server: other users count too) while
 * publishing and while invitation drains. Run: node --import tsx services/invitation/bench/routing.bench.ts
 */
import { makeEvent, type EventMessage } from '@sched/contracts';
import { createDb } from '@sched/db';
import { createLogger } from '@sched/logger';
import { createBroker, startConsumer, type Consumer } from '@sched/messaging';
import { cleanupAmqpPrefix, createTestDatabase, makeBooking, queuedCount, testAmqp } from '@sched/testing';
import { machineCpu } from '../../../tests-e2e/bench/harness';
import { concernsAnInvitation } from '../src/events/booking-created.handler';
import { inbox } from '../src/store/schema';

const N = Number(process.env.BENCH_MESSAGES ?? 1000);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 5);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rabbitMs = () => machineCpu({ processes: [], radicale: { dataDir: '/nonexistent' } }).groups.get('rabbitmq') ?? 0;
const nodeUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function created(n: number): EventMessage {
  return makeEvent('booking.created', {
    workspaceId: 'wks_benchxxxxxxxxxxxxxxxxx',
    data: {
      booking: makeBooking({ source: 'api', metadata: { n: String(n) } }),
      internal: { blocked_from: '2030-01-01T09:00:00.000Z', blocked_to: '2030-01-01T09:30:00.000Z', invitation_id: null },
    },
  });
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ services: ['invitation'] });
  const mq = testAmqp();
  const logger = createLogger({ service: 'routing-bench', level: 'error' });
  const broker = createBroker({ url: mq.url, prefix: mq.prefix, logger, name: 'routing-bench' });
  await broker.waitForConnection();
  let refused = 0;
  // invitation's consumer as startInvitationConsumer configures it, its `accepts` counted.
  const consumer = (): Consumer =>
    startConsumer({
      broker,
      db: createDb(db.pool('invitation')),
      inbox,
      service: 'invitation',
      bindings: ['booking.created.invitation'],
      exactBindings: ['booking.created'],
      accepts: (e) => {
        const yes = concernsAnInvitation(e);
        if (!yes) refused += 1;
        return yes;
      },
      batch: true,
      handler: async () => undefined,
      logger,
    });
  const first = consumer();
  await first.ready();
  await first.stop();
  const queue = `${mq.prefix}invitation`;
  const events = Array.from({ length: N }, (_, i) => created(i));

  const rows: Array<{ key: string; routed: number; publishRabbitUs: number; drainNodeUs: number; drainRabbitUs: number }> = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    for (const key of pair % 2 === 0 ? ['booking.created', 'booking.created.no_invitation'] : ['booking.created.no_invitation', 'booking.created']) {
      const r0 = rabbitMs();
      for (let i = 0; i < N; i += 100) await Promise.all(events.slice(i, i + 100).map((e) => broker.publish(e, key)));
      await sleep(300);
      const routed = await queuedCount(mq.url, queue);
      const r1 = rabbitMs();
      refused = 0;
      const c0 = nodeUs();
      const c = consumer();
      await c.ready();
      while (refused < routed) await sleep(5);
      await c.stop();
      const c1 = nodeUs();
      const r2 = rabbitMs();
      rows.push({ key, routed, publishRabbitUs: ((r1 - r0) * 1000) / N, drainNodeUs: (c1 - c0) / N, drainRabbitUs: ((r2 - r1) * 1000) / N });
    }
  }
  for (const key of ['booking.created', 'booking.created.no_invitation']) {
    const of = rows.filter((r) => r.key === key);
    process.stdout.write(
      `${JSON.stringify({
        key,
        per_messages: N,
        routed_to_invitation: of.map((r) => r.routed),
        per_booking_us_median: {
          invitation_consumer_cpu: Math.round(median(of.map((r) => r.drainNodeUs))),
          rabbitmq_cpu_publishing: Math.round(median(of.map((r) => r.publishRabbitUs))),
          rabbitmq_cpu_while_invitation_drains: Math.round(median(of.map((r) => r.drainRabbitUs))),
        },
      })}\n`,
    );
  }
  await broker.close();
  await cleanupAmqpPrefix(mq.url, mq.prefix, ['invitation', 'invitation.dlq', 'invitation.retry.1000ms', 'invitation.retry.5000ms', 'invitation.retry.30000ms'], ['scheduling.events', 'scheduling.dlx']);
  await db.drop();
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
