import { PassThrough } from 'node:stream';
import { createLogger, type Logger } from '@sched/logger';
import { createHttpApp, type HttpAppOptions } from '../src';

/** A logger whose JSON lines the test can read back. */
export function captureLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  stream.on('data', (chunk: Buffer) => {
    for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  return { logger: createLogger({ service: 'test', stream, level: 'debug' }), lines };
}

/** An app with a capturing logger; the caller registers routes and calls finalize(). */
export function testApp(opts: Partial<HttpAppOptions> = {}) {
  const { logger, lines } = captureLogger();
  return { ...createHttpApp({ service: 'test', logger, ...opts }), lines };
}

export const flushLogs = () => new Promise((r) => setImmediate(r));
