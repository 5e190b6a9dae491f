/**
 * @platform/chain: weights on a Bittensor chain. A subtensor client with failover and a timeout
 * on every call, the metagraph read from `SubtensorModule.Keys`, the subnet's rules checked the
 * way the chain checks them, the weights submitter (set_weights, or commit-reveal v4 with
 * timelock encryption to a drand round) that believes only the block's events, and the
 * validator loop around it: `runValidator({ client: createChainClient(...), ... })`.
 * The local subtensor for development and tests is its own entry, `@platform/chain/local`.
 */

export {
  type BlockRef,
  type CallOptions,
  type ChainClient,
  type ChainClientOptions,
  type ChainClientStatus,
  type ChainConnection,
  ChainError,
  type ChainErrorKind,
  createChainClient,
  describeEndpoint,
} from "./chain-client.js";
export {
  type ChainMetagraph,
  type ChainMetagraphOptions,
  chainMetagraph,
  type MetagraphRead,
  readMetagraph,
} from "./chain-metagraph.js";
export {
  type BeaconChoice,
  COMMIT_REVEAL_VERSION,
  parseBeaconPublicKey,
  resolveBeacon,
} from "./commit-reveal.js";
export { DRAND_QUICKNET, verifyRoundSignature } from "./drand-beacon.js";
export {
  type EpochModelKind,
  type EpochSchedule,
  type RuntimeFeatures,
  readEpochSchedule,
  runtimeFeatures,
} from "./epoch-model.js";
export {
  collectionHealth,
  DEFAULT_GRACE_COLLECTIONS,
  type HealthGate,
  HealthGateError,
  type HealthVerdict,
  historyHealthGate,
  observingHealthGate,
} from "./health-gate.js";
export { MetagraphError, type MetagraphProvider } from "./metagraph-provider.js";
export {
  CUSTOM_TRANSACTION_ERRORS,
  type PoolRejection,
  poolRejection,
} from "./pool-rejection.js";
export {
  type CommitDetail,
  OpenAttemptError,
  type RevealCause,
  type SubmissionKind,
  type SubmissionRecord,
  type SubmissionStatus,
  SubmissionStore,
  validatorMigrations,
} from "./submission-store.js";
export {
  BURN_UID,
  type BuiltWeights,
  buildWeights,
  CommitRevealEnabledError,
  checkSetWeights,
  type LocalCheck,
  LocalCheckError,
  readSubnetRules,
  type SubnetRules,
} from "./subnet-rules.js";
export { TimelockError, timelockDecrypt, timelockEncrypt } from "./timelock.js";
export {
  HotkeyFileError,
  readValidatorHotkey,
  type ValidatorHotkey,
} from "./validator-hotkey.js";
export { type ValidatorKeySource, validatorKeypair } from "./validator-keypair.js";
export {
  runValidator,
  VALIDATOR_EXIT,
  type ValidatorOptions,
  type ValidatorOutcome,
} from "./validator-loop.js";
export {
  createWeightsSubmitter,
  type PreparedWeights,
  type SubmitResult,
  type SubmitterEvent,
  type WeightsSubmitter,
  type WeightsSubmitterOptions,
} from "./weights-submitter.js";
export {
  decodeWeightsTlockPayload,
  encodeWeightsTlockPayload,
  revealRound,
  revealRoundV2,
  type WeightsTlockPayload,
} from "./weights-tlock-payload.js";
