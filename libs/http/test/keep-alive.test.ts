import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { createHttpApp } from '../src';

describe('keep-alive between services', () => {
  it('keeps idle connections open longer (65 s) than internal clients keep idle sockets (30 s), so a reused socket is never one the server is closing', async () => {
    const http = createHttpApp({ service: 'test', logger: createLogger({ service: 'test', stream: new PassThrough() }) });
    const server = await http.listen(0, '127.0.0.1');
    try {
      expect(server.keepAliveTimeout).toBe(65_000);
      expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
    } finally {
      await http.close();
    }
  });
});
