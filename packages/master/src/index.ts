/**
 * @platform/master: the subnet's control plane. Start one with `createMaster(loadMasterConfig())`
 * (or `platform master serve`); the rest of this index is what operators plug in or reuse:
 * the weights aggregation and metagraph providers, and the image policy.
 */

// The chain stack moved to @platform/chain (and the local subtensor to @platform/chain/local);
// these names stay exported here so code that imported them from the master keeps working.
// Import them from @platform/chain.
export {
  type BeaconChoice,
  type BlockRef,
  type BuiltWeights,
  buildWeights,
  type CallOptions,
  type ChainClient,
  type ChainClientOptions,
  type ChainClientStatus,
  type ChainConnection,
  ChainError,
  type ChainErrorKind,
  type ChainMetagraph,
  type ChainMetagraphOptions,
  COMMIT_REVEAL_VERSION,
  type CommitDetail,
  CommitRevealEnabledError,
  chainMetagraph,
  checkSetWeights,
  collectionHealth,
  createChainClient,
  createWeightsSubmitter,
  DEFAULT_GRACE_COLLECTIONS,
  DRAND_QUICKNET,
  decodeWeightsTlockPayload,
  describeEndpoint,
  encodeWeightsTlockPayload,
  type HealthGate,
  HealthGateError,
  type HealthVerdict,
  HotkeyFileError,
  historyHealthGate,
  type LocalCheck,
  LocalCheckError,
  type MetagraphRead,
  OpenAttemptError,
  observingHealthGate,
  type PreparedWeights,
  parseBeaconPublicKey,
  type RevealCause,
  readMetagraph,
  readSubnetRules,
  readValidatorHotkey,
  resolveBeacon,
  revealRound,
  runValidator,
  type SubmissionKind,
  type SubmissionRecord,
  type SubmissionStatus,
  SubmissionStore,
  type SubmitResult,
  type SubmitterEvent,
  type SubnetRules,
  TimelockError,
  timelockDecrypt,
  timelockEncrypt,
  VALIDATOR_EXIT,
  type ValidatorHotkey,
  type ValidatorKeySource,
  type ValidatorOptions,
  type ValidatorOutcome,
  validatorKeypair,
  validatorMigrations,
  verifyRoundSignature,
  type WeightsSubmitter,
  type WeightsSubmitterOptions,
  type WeightsTlockPayload,
} from "@platform/chain";
export {
  LOCAL_SUBTENSOR_HYPERPARAMETERS,
  type LocalSubtensor,
  type LocalSubtensorFault,
  type LocalSubtensorHyperparameter,
  type LocalSubtensorHyperparameterValue,
  type LocalSubtensorOptions,
  type LocalSubtensorRuntime,
  type LocalSubtensorStatus,
  startLocalSubtensor,
} from "@platform/chain/local";
export {
  type BrokerConfig,
  ConfigError,
  loadMasterConfig,
  type MasterConfig,
  type MasterFlags,
  type ReconcilerConfig,
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
