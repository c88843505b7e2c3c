/**
 * The load side of bench/dispatch.bench.ts, in a process of its own so that the bench process's CPU
 * (read from /proc) is the service's alone: a publisher putting booking.created events on the
 * exchange as the booking service's outbox relay does, and the webhook receiver. Driven over IPC by
 * the bench; not meant to be run by hand.
 */
import { newId } from '@sched/contracts';
import { startPublisher, startReceiver } from '../test/support/dispatch-harness';

type Command = { cmd: 'warm'; ws: string; events: number } | { cmd: 'run'; ws: string; rate: number; seconds: number; batch: number } | { cmd: 'close' };

const send = (m: unknown): void => {
  process.send!(m);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** CPU ms of this process (user + system). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function main(): Promise<void> {
  const pub = await startPublisher({ url: process.env.BENCH_AMQP_URL!, prefix: process.env.BENCH_AMQP_PREFIX! });
  const receiver = await startReceiver();
  send({ ready: receiver.url });

  process.on('message', (m: Command) => {
    void (async () => {
      if (m.cmd === 'close') {
        await pub.close();
        await receiver.close();
        process.exit(0);
      }
      if (m.cmd === 'warm') {
        for (let i = 0; i < m.events; i++) await pub.publish('booking.created', m.ws);
        while (receiver.requests.length < m.events) await sleep(20);
        receiver.requests.length = 0;
        send({ warm: true });
        return;
      }
      const total = m.rate * m.seconds;
      const published = new Map<string, number>();
      const cpuBefore = cpuMs();
      const started = performance.now();
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < total; i += m.batch) {
        // Open-loop schedule: batch k goes out at k * batch / rate seconds whatever happened before.
        const due = started + (i * 1000) / m.rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        for (let j = i; j < Math.min(total, i + m.batch); j++) {
          const id = newId('wev');
          published.set(id, Date.now());
          sends.push(pub.publish('booking.created', m.ws, { id }));
        }
      }
      await Promise.all(sends);
      const deadline = Date.now() + 30_000;
      while (receiver.requests.length < total && Date.now() < deadline) await sleep(50);
      const arrived = new Map<string, number>();
      for (const r of receiver.requests) arrived.set(String(r.headers['webhook-id']), r.at);
      const latencies = [...published].flatMap(([id, t0]) => (arrived.has(id) ? [arrived.get(id)! - t0] : []));
      send({ latencies, requests: receiver.requests.length, distinct: arrived.size, cpuMs: cpuMs() - cpuBefore });
    })().catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
