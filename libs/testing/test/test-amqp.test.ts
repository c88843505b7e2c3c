import amqp from 'amqplib';
import { cleanupAmqpPrefix, testAmqp } from '../src';

describe('testAmqp / cleanupAmqpPrefix', () => {
  it('gives every call its own prefix on the shared broker', () => {
    const prefixes = new Set(Array.from({ length: 20 }, () => testAmqp().prefix));
    expect(prefixes.size).toBe(20);
    expect([...prefixes][0]).toMatch(/^t_[0-9a-f]{12}\.$/);
  });

  it('deletes the queues and exchanges a test declared under its prefix, prefixed or not', async () => {
    const { url, prefix } = testAmqp();
    const conn = await amqp.connect(url);
    try {
      const ch = await conn.createChannel();
      await ch.assertExchange(`${prefix}scheduling.events`, 'topic', { durable: true });
      await ch.assertQueue(`${prefix}booking`, { durable: true });
      await ch.assertQueue(`${prefix}booking.dlq`, { durable: true });
      await ch.close();

      await cleanupAmqpPrefix(url, prefix, ['booking', `${prefix}booking.dlq`, 'never-made'], ['scheduling.events']);

      // checkQueue/checkExchange on a missing name closes the channel with 404, hence a channel per check.
      for (const check of [(c: amqp.Channel) => c.checkQueue(`${prefix}booking`), (c: amqp.Channel) => c.checkQueue(`${prefix}booking.dlq`), (c: amqp.Channel) => c.checkExchange(`${prefix}scheduling.events`)]) {
        const c = await conn.createChannel();
        c.on('error', () => undefined);
        await expect(check(c)).rejects.toMatchObject({ code: 404 });
      }
    } finally {
      await conn.close();
    }
  });

  it('refuses an empty prefix so it cannot delete shared topology', async () => {
    await expect(cleanupAmqpPrefix(testAmqp().url, '', ['booking'])).rejects.toThrow(/non-empty prefix/);
  });
});
