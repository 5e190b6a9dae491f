export {
  type AnyRoute,
  type App,
  type AppOptions,
  type BeforeHook,
  type BodySpec,
  createApp,
  type HttpMethod,
  json,
  queryObject,
  type RequestObservation,
  type ResponseSpec,
  type RouteContext,
  type RouteDefinition,
  type RouteShape,
  type ServerEnv,
  toResponse,
} from "./app.js";
export {
  DEFAULT_BODY_LIMIT,
  isJsonMediaType,
  mediaType,
  parseJsonBody,
  readBodyWithLimit,
  requireMediaType,
} from "./body.js";
export { HttpError, isHttpError } from "./http-error.js";
export {
  createLogger,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  redact,
  redactText,
  registerLogSecret,
} from "./logger.js";
export {
  type FetchHandler,
  type NodeHandler,
  type RunningServer,
  type ServeOptions,
  serve,
  toWebRequest,
  writeWebResponse,
} from "./node-adapter.js";
export { buildOpenApi, type OpenApiDocument, toOpenApiPath } from "./openapi.js";
export { REQUEST_ID_HEADER, requestIdOf } from "./request-id.js";
export {
  formatSseEvent,
  lastEventIdOf,
  type SseEvent,
  type SseOptions,
  type SseSourceContext,
  sseResponse,
} from "./sse.js";
export { type ValidationIssue, type ValueSource, validateValue } from "./validation.js";
export { ValidationError } from "./validation-error.js";
