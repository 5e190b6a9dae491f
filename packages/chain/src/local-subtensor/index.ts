/**
 * `@platform/chain/local`: a local subtensor for development and tests, a JSON-RPC websocket
 * node that @polkadot/api connects to unchanged, serving finney's runtime metadata and applying
 * `set_weights` and commit-reveal v4 (`commit_timelocked_weights`, revealed by its own drand
 * beacon) with the chain's own checks and errors, plus a `dev_` namespace for neurons,
 * hyperparameters, drand rounds and faults.
 */
export {
  LOCAL_SUBTENSOR_HYPERPARAMETERS,
  LOCAL_SUBTENSOR_RUNTIMES,
  type LocalSubtensor,
  type LocalSubtensorDrandInfo,
  type LocalSubtensorFault,
  type LocalSubtensorHyperparameter,
  type LocalSubtensorHyperparameterValue,
  type LocalSubtensorOptions,
  type LocalSubtensorRuntime,
  type LocalSubtensorStatus,
  startLocalSubtensor,
} from "./local-subtensor.js";
