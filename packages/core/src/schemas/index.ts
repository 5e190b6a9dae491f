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
  WEAKENING_FIELDS,
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
} from "./registry.js";
export { isSlug, SLUG_MAX_LENGTH, SLUG_PATTERN, Slug } from "./slug.js";
export { ChallengeWeightsResponse, WeightsSnapshot, WeightsSource } from "./weights.js";
