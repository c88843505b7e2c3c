import { z } from 'zod';
import { DEAD_LETTER_PEEK_DEFAULT, listDeadLettersQuerySchema, replayDeadLettersBodySchema } from '@sched/contracts';
import { parseBody, parseParams, parseQuery, sendData, type HttpApp } from '@sched/http';
import { inspectAllDeadLetters, replayServiceDeadLetters, type DeadLetterTools } from '../domain/dead-letter-queues';

const queueParams = z.object({ queue: z.string() });

/** The DLQs of every consuming service: what is stuck, and moving it back to its queue. */
export function registerDeadLetterRoutes(http: HttpApp, tools: DeadLetterTools): void {
  http.route('GET', '/admin/v1/dead-letters', async (req, res) => {
    const { limit } = parseQuery(listDeadLettersQuerySchema, req);
    sendData(res, 200, await inspectAllDeadLetters(tools, limit ?? DEAD_LETTER_PEEK_DEFAULT));
  });

  http.route('POST', '/admin/v1/dead-letters/:queue/replay', async (req, res) => {
    const { queue } = parseParams(queueParams, req);
    const body = parseBody(replayDeadLettersBodySchema.optional(), req);
    sendData(res, 200, await replayServiceDeadLetters(tools, queue, body?.max));
  });
}
