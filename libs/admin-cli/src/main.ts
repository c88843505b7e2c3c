/**
 * `pnpm admin <command>`: the admin CLI (run with tsx). See `pnpm admin --help` and docs/admin-cli.md.
 */
import { readFileSync } from 'node:fs';
import { runCli } from './cli';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  isTTY: process.stderr.isTTY === true,
  readFile: (path) => readFileSync(path, 'utf8'),
  readStdin,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Not a usage or API error: a bug. Say so plainly rather than with a stack trace.
    process.stderr.write(`error: unexpected failure: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
