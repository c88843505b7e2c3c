import { runCli, type Io } from '../../src';
import { startStubServer, type StubServer } from '../../../client/test/support/stub-server';

export const ADMIN_TOKEN = 'admin-token-for-tests';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process against `stub` with captured output; env and io can be overridden. */
export async function runAgainst(stub: StubServer | null, argv: string[], overrides: Partial<Io> & { env?: Record<string, string | undefined> } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const env = { ...(stub ? { ADMIN_URL: stub.url } : {}), ADMIN_TOKEN, ...overrides.env };
  const code = await runCli(argv, {
    cwd: '/nonexistent-dir-for-tests',
    ...overrides,
    env,
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  return { code, stdout, stderr };
}

export { startStubServer, type StubServer };
