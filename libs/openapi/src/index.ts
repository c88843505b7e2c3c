export { buildOpenApiDocument, serializeOpenApiDocument, CONTRACT_VERSION, OPENAPI_DOCUMENT_PATH } from './build-document';
export { createResponseValidator, type ResponseToValidate, type ResponseValidator, type HeaderSource } from './response-validator';
export type { JsonSchema } from './schema-components';
export { checkContract, contractStats, type ContractResponse } from './contract-check';
