export {
  BrokerCleanupRequest,
  BrokerCleanupResponse,
  BrokerContainer,
  BrokerFile,
  BrokerLimits,
  BrokerListRequest,
  BrokerListResponse,
  BrokerRunRequest,
  BrokerRunResponse,
} from "./broker.js";
export { ErrorResponse, HTTPValidationError, ValidationIssueSchema } from "./errors.js";
export {
  ChallengeAdminView,
  ChallengeCreate,
  ChallengeCreateResponse,
  ChallengeEnv,
  ChallengeMetadata,
  ChallengeResources,
  ChallengeSecrets,
  ChallengeStatus,
  ChallengeUpdate,
  ChallengeVolumes,
  DEFAULT_REQUIRED_CAPABILITIES,
  RegistryChallenge,
  RegistryResponse,
  RuntimeOperationResponse,
  Slug,
} from "./registry.js";
export { ChallengeWeightsResponse, WeightsSnapshot, WeightsSource } from "./weights.js";
