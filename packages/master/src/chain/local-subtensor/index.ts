/**
 * A local subtensor for development and tests: a JSON-RPC websocket node that @polkadot/api
 * connects to unchanged, serving finney's runtime metadata and applying `set_weights` with the
 * chain's own checks and errors, plus a `dev_` namespace for neurons, hyperparameters and faults.
 */
export {
  HYPERPARAMETERS as LOCAL_SUBTENSOR_HYPERPARAMETERS,
  type HyperparameterName as LocalSubtensorHyperparameter,
  type HyperparameterValue as LocalSubtensorHyperparameterValue,
} from "./_chain-state.js";
export type { LocalSubtensorFault, LocalSubtensorStatus } from "./_rpc-methods.js";
export {
  type LocalSubtensor,
  type LocalSubtensorOptions,
  startLocalSubtensor,
} from "./local-subtensor.js";
