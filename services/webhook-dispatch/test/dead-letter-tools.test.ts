import net, { type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { createBroker, type Broker } from '@sched/messaging';
import { createDeadLetterTools } from '../src/events/dead-letter.tools';

/** The dead-letter endpoints cannot be served without RabbitMQ: 503 service_unavailable (decisions.md §2), not 500. */
let broker: Broker;

beforeAll(async () => {
  // A port where nothing listens: the broker keeps retrying in the background and stays disconnected.
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  const logger = createLogger({ service: 'dead-letter-tools-test', stream: new PassThrough(), level: 'error' });
  broker = createBroker({ url: `amqp://guest:guest@127.0.0.1:${port}`, name: 'dead-letter-tools-test', logger, reconnect: { initialDelayMs: 5000 } });
});

afterAll(async () => broker.close());

it('answers 503 service_unavailable (Retry-After from sendError) while RabbitMQ is unreachable', async () => {
  const tools = createDeadLetterTools(broker);
  for (const attempt of [tools.inspect('booking', 5), tools.replay('booking', undefined)]) {
    await expect(attempt).rejects.toMatchObject({ name: 'DomainError', code: 'service_unavailable', status: undefined });
  }
});
