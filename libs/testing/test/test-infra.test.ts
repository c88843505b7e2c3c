import net from 'node:net';
import globalSetup from '../src/global-setup';
import globalTeardown from '../src/global-teardown';
import { missingInfraMessage, planTestInfra, tcpAnswers, type InfraProbes } from '../src';

function probes(localUp: { postgres: boolean; rabbitmq: boolean }, docker: boolean) {
  const calls = { answers: [] as string[], docker: 0 };
  const p: InfraProbes = {
    answers: async (url) => {
      calls.answers.push(url);
      return url.startsWith('amqp') ? localUp.rabbitmq : localUp.postgres;
    },
    dockerAvailable: async () => {
      calls.docker += 1;
      return docker;
    },
  };
  return { p, calls };
}

describe('planTestInfra: where the shared test servers come from', () => {
  it('uses URLs from the environment without probing anything', async () => {
    const { p, calls } = probes({ postgres: false, rabbitmq: false }, false);
    const plan = await planTestInfra({ TEST_DATABASE_URL: 'postgres://x@db:5432/postgres', TEST_AMQP_URL: 'amqp://mq' }, p);
    expect(plan).toEqual({ postgres: { kind: 'env', url: 'postgres://x@db:5432/postgres' }, rabbitmq: { kind: 'env', url: 'amqp://mq' } });
    expect(calls).toEqual({ answers: [], docker: 0 });
  });

  it('uses the default local servers when they answer, without asking Docker', async () => {
    const { p, calls } = probes({ postgres: true, rabbitmq: true }, true);
    const plan = await planTestInfra({}, p);
    expect(plan).toEqual({
      postgres: { kind: 'local', url: 'postgres://postgres@127.0.0.1:5432/postgres' },
      rabbitmq: { kind: 'local', url: 'amqp://guest:guest@127.0.0.1:5672' },
    });
    expect(calls.docker).toBe(0);
  });

  it('starts a container only for the server that is missing, checking Docker once', async () => {
    const { p, calls } = probes({ postgres: false, rabbitmq: true }, true);
    const plan = await planTestInfra({ TEST_AMQP_URL: '' }, p);
    expect(plan).toEqual({ postgres: { kind: 'container' }, rabbitmq: { kind: 'local', url: 'amqp://guest:guest@127.0.0.1:5672' } });
    expect(calls.docker).toBe(1);
  });

  it('says what to start when there is neither a server nor Docker', async () => {
    const { p, calls } = probes({ postgres: false, rabbitmq: false }, false);
    const plan = await planTestInfra({}, p);
    expect(plan).toEqual({ postgres: { kind: 'missing' }, rabbitmq: { kind: 'missing' } });
    expect(calls.docker).toBe(1);
    const msg = missingInfraMessage(plan);
    expect(msg).toContain('postgres: nothing answers at 127.0.0.1:5432 and TEST_DATABASE_URL is not set');
    expect(msg).toContain('rabbitmq: nothing answers at 127.0.0.1:5672 and TEST_AMQP_URL is not set');
    expect(missingInfraMessage({ postgres: { kind: 'container' }, rabbitmq: { kind: 'env', url: 'amqp://x' } })).toBeUndefined();
  });
});

describe('tcpAnswers', () => {
  it('is true for a listening port and false for a closed one', async () => {
    const server = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    try {
      expect(await tcpAnswers(`postgres://u@127.0.0.1:${port}/db`)).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(await tcpAnswers(`postgres://u@127.0.0.1:${port}/db`)).toBe(false);
  });
});

describe('global setup and teardown', () => {
  const saved = { db: process.env.TEST_DATABASE_URL, amqp: process.env.TEST_AMQP_URL };
  afterEach(() => {
    process.env.TEST_DATABASE_URL = saved.db;
    process.env.TEST_AMQP_URL = saved.amqp;
  });

  it('keeps URLs the environment already names, starts nothing, and teardown has nothing to stop', async () => {
    process.env.TEST_DATABASE_URL = 'postgres://ci@db.internal:5432/postgres';
    process.env.TEST_AMQP_URL = 'amqp://ci@mq.internal';
    await globalSetup();
    expect([process.env.TEST_DATABASE_URL, process.env.TEST_AMQP_URL]).toEqual(['postgres://ci@db.internal:5432/postgres', 'amqp://ci@mq.internal']);
    await expect(globalTeardown()).resolves.toBeUndefined();
  });
});
