/**
 * @platform/challenge-sdk/client: the other side of a challenge's routes, for its workers and a
 * miner's tools. One client per base URL and credential (a bearer token, or a hotkey that signs
 * every request), JSON helpers, and `deliver`: post these exact bytes until a 2xx, a definitive
 * refusal or a deadline, honouring Retry-After. docs/challenge-sdk.md lists every export.
 */

export type { BackoffOptions } from "./retry-policy.js";
export { backoffDelayMs, isRetryableStatus, retryAfterMs } from "./retry-policy.js";
export {
  type ClientAnswer,
  type ClientAuth,
  createWorkerClient,
  type DeliverOptions,
  type SendOptions,
  type WorkerClient,
  type WorkerClientOptions,
} from "./worker-client.js";
export { WorkerClientError, type WorkerClientErrorKind } from "./worker-client-error.js";
