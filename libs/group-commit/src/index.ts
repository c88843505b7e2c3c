export { createGroupCommit, type GroupCommit, type GroupCommitOptions } from './group-commit';
