import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from './build-document';
import { createResponseValidator, type ResponseValidator } from './response-validator';

/**
 * The contract test (issue 8): test harnesses pass every response they get from the gateway here, so
 * the whole integration suite is checked against the generated OpenAPI document. A mismatch throws
 * (the test that made the request fails); every check appends one line (`ok` or `mismatch`) to
 * .data/contract/<pid>.log — Jest workers end without an exit event, so nothing waits for one — and
 * `npm test` prints the sum.
 */
let validator: ResponseValidator | undefined;
const stats = { validated: 0, mismatches: 0, skipped: 0 };

const DIR = path.resolve(__dirname, '../../..', '.data', 'contract');

function record(outcome: 'ok' | 'mismatch'): void {
  // The checker's own tests feed it broken answers on purpose; those are not the suite's answers.
  if (process.env.CONTRACT_TALLY === 'off') return;
  try {
    mkdirSync(DIR, { recursive: true });
    appendFileSync(path.join(DIR, `${process.pid}.log`), `${outcome}\n`);
  } catch {
    /* best effort: the count is a report, the assertion itself already ran */
  }
}

export interface ContractResponse {
  method: string;
  /** Path with query, as requested. */
  path: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Paths the document covers; health, metrics, internal and booking page paths are not part of the contract. */
function inScope(p: string): boolean {
  return /^\/(v1|admin\/v1)\//.test(p) || p === '/admin/v1/workspaces';
}

export function checkContract(res: ContractResponse): void {
  const pathOnly = res.path.split('?')[0] ?? '';
  if (!inScope(pathOnly)) {
    stats.skipped++;
    return;
  }
  validator ??= createResponseValidator(buildOpenApiDocument());
  let problems = validator.validate(res);
  // An unknown path (404), a method not defined on a path (405) and a missing or bad key (401) are
  // answered by the gateway for any path, documented or not.
  if (problems.length && problems.every((p) => /no documented path matches|method not documented/.test(p)) && [401, 404, 405].includes(res.status)) {
    problems = [];
  }
  stats.validated++;
  record(problems.length ? 'mismatch' : 'ok');
  if (problems.length) {
    stats.mismatches++;
    throw new Error(`response does not match the OpenAPI document (${res.method} ${res.path} → ${res.status}):\n  ${problems.join('\n  ')}`);
  }
}

export function contractStats(): Readonly<typeof stats> {
  return stats;
}
