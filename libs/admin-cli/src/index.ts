export { runCli, COMMANDS, PROG } from './cli';
export type { Io } from './output';
export { EXIT_OK, EXIT_API_ERROR, EXIT_USAGE } from './errors';
