/** api-v1.md Versioning rule 3: the server-side TypeScript client library of contract 1.0.0. */
export const CLIENT_VERSION = '1.0.0';
