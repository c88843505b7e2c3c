/**
 * `pnpm openapi`: writes docs/openapi.json from the zod schemas of libs/contracts.
 * `pnpm openapi:check` (`--check`): exits 1 when the committed file differs from what the
 * schemas generate now, so CI catches a contract change whose document was not regenerated.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { serializeOpenApiDocument } from '../libs/openapi/src';

const target = path.resolve(__dirname, '..', 'docs', 'openapi.json');
const relative = path.relative(process.cwd(), target) || target;

function main(argv: string[]): number {
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length > 0) {
    console.error(`openapi: unknown argument ${unknown.join(' ')}; usage: tsx scripts/openapi.ts [--check]`);
    return 2;
  }
  const generated = serializeOpenApiDocument();
  if (argv.includes('--check')) {
    const committed = existsSync(target) ? readFileSync(target, 'utf8') : null;
    if (committed === generated) {
      console.log(`openapi: ${relative} is up to date`);
      return 0;
    }
    console.error(
      committed === null
        ? `openapi: ${relative} is missing; run \`pnpm openapi\` and commit it.`
        : `openapi: ${relative} is stale: libs/contracts changed since it was generated; run \`pnpm openapi\` and commit the result.`,
    );
    return 1;
  }
  writeFileSync(target, generated);
  console.log(`openapi: wrote ${relative} (${generated.length} bytes)`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
