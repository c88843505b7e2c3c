// Runs @seriousme/openapi-schema-validator (ESM only, so outside Jest's CommonJS runtime) on the
// JSON file named by argv[2] and prints {valid, errors, version} as one JSON line.
import { Validator } from '@seriousme/openapi-schema-validator';

const validator = new Validator();
const result = await validator.validate(process.argv[2]);
console.log(JSON.stringify({ valid: result.valid, errors: result.errors ?? null, version: validator.version ?? null }));
