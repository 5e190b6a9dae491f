/**
 * @platform/master: the subnet's control plane. Start one with `createMaster(loadMasterConfig())`
 * (or `platform master serve`); the rest of this index is what operators plug in or reuse:
 * the weights aggregation and metagraph providers, and the image policy.
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
} from "./chain/chain-client.js";
export {
  type ChainMetagraph,
  type ChainMetagraphOptions,
  chainMetagraph,
  type MetagraphRead,
  readMetagraph,
} from "./chain/chain-metagraph.js";
export {
  type BeaconChoice,
  COMMIT_REVEAL_VERSION,
  parseBeaconPublicKey,
  resolveBeacon,
} from "./chain/commit-reveal.js";
export { DRAND_QUICKNET, verifyRoundSignature } from "./chain/drand-beacon.js";
export {
  collectionHealth,
  DEFAULT_GRACE_COLLECTIONS,
  type HealthGate,
  HealthGateError,
  type HealthVerdict,
  historyHealthGate,
  observingHealthGate,
} from "./chain/health-gate.js";
export {
  LOCAL_SUBTENSOR_HYPERPARAMETERS,
  type LocalSubtensor,
  type LocalSubtensorFault,
  type LocalSubtensorHyperparameter,
  type LocalSubtensorHyperparameterValue,
  type LocalSubtensorOptions,
  type LocalSubtensorStatus,
  startLocalSubtensor,
} from "./chain/local-subtensor/index.js";
export {
  type CommitDetail,
  OpenAttemptError,
  type RevealCause,
  type SubmissionKind,
  type SubmissionRecord,
  type SubmissionStatus,
  SubmissionStore,
  validatorMigrations,
} from "./chain/submission-store.js";
export {
  type BuiltWeights,
  buildWeights,
  CommitRevealEnabledError,
  checkSetWeights,
  type LocalCheck,
  LocalCheckError,
  readSubnetRules,
  type SubnetRules,
} from "./chain/subnet-rules.js";
export { TimelockError, timelockDecrypt, timelockEncrypt } from "./chain/timelock.js";
export {
  HotkeyFileError,
  readValidatorHotkey,
  type ValidatorHotkey,
} from "./chain/validator-hotkey.js";
export {
  runValidator,
  VALIDATOR_EXIT,
  type ValidatorOptions,
  type ValidatorOutcome,
} from "./chain/validator-loop.js";
export {
  createWeightsSubmitter,
  type PreparedWeights,
  type SubmitResult,
  type SubmitterEvent,
  type ValidatorKeySource,
  validatorKeypair,
  type WeightsSubmitter,
  type WeightsSubmitterOptions,
} from "./chain/weights-submitter.js";
export {
  decodeWeightsTlockPayload,
  encodeWeightsTlockPayload,
  revealRound,
  type WeightsTlockPayload,
} from "./chain/weights-tlock-payload.js";
export {
  type BrokerConfig,
  ConfigError,
  loadMasterConfig,
  type MasterConfig,
  type MasterFlags,
} from "./config.js";
export { type CreateMasterOptions, createMaster, type Master } from "./master.js";
export type { MasterContext } from "./master-context.js";
export type { ChallengeRow } from "./registry/challenge-row.js";
export type { ChallengeStore } from "./registry/challenge-store.js";
export {
  enforceImagePolicy,
  type ImagePolicy,
  PRODUCTION_IMAGE_POLICY,
  parseImageReference,
} from "./registry/image-policy.js";
export { MASTER_API_VERSION, MASTER_VERSION } from "./version.js";
export {
  type AggregatedWeights,
  type AggregateOptions,
  aggregateWeights,
  BURN_UID,
  type ChallengeWeightsInput,
  type FailurePolicy,
} from "./weights/aggregate-weights.js";
export { toU16Weights, U16_MAX } from "./weights/chain-weights.js";
export {
  httpMetagraph,
  jsonFileMetagraph,
  MetagraphError,
  type MetagraphProvider,
  parseMetagraph,
  staticMetagraph,
} from "./weights/metagraph-provider.js";
