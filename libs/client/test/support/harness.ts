import { buildOpenApiDocument, createResponseValidator } from '@sched/openapi';
import { SchedulingClient, type ClientOptions } from '../../src';
import { startStubServer, type StubServer } from './stub-server';

export const API_KEY = 'sk_test_abcdefghijklmnopqrstuvwxyz123456';

const validator = createResponseValidator(buildOpenApiDocument());

/**
 * A client pointed at a fresh stub API. Every /v1 answer the stub sends is checked against the
 * OpenAPI document, so the scripted answers are ones the real API could give.
 */
export async function clientWithStub(options: Partial<ClientOptions> = {}): Promise<{ stub: StubServer; client: SchedulingClient; sleeps: number[] }> {
  const stub = await startStubServer({ validate: validator.validate });
  const sleeps: number[] = [];
  const client = new SchedulingClient({
    baseUrl: stub.url,
    apiKey: API_KEY,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { stub, client, sleeps };
}
