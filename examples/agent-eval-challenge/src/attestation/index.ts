// Attestation: the TDX v4 quote format, quote verifiers (Intel DCAP with a pluggable chain of
// trust, and a non-confidential development verifier), and the report_data bindings.
export { cachedPccsSource } from "./dcap/collateral-cache.js";
export { intelCollateralVerifier } from "./dcap/intel-collateral-verifier.js";
export { fetchCollateral } from "./dcap/pccs-client.js";
export { parseAcceptedTcbStatuses } from "./dcap/tcb-policy.js";
export type { TcbStatus } from "./dcap/tcb-status.js";
export { dcapVerifier } from "./dcap-verifier.js";
export { DEV_MEASUREMENT, loadDevAttestationKey, signDevQuote } from "./dev-quote.js";
export { devVerifier } from "./dev-verifier.js";
export {
  type EventLogEntry,
  MAX_EVENT_LOG_ENTRIES,
  measuredEvent,
  replayEventLog,
  workloadEvents,
} from "./event-log.js";
export { type QuoteVerifier, rejected } from "./quote-verifier.js";
export {
  evalResultReportData,
  instanceSeedReportData,
  reviewReportData,
} from "./report-data.js";
export { MAX_TDX_QUOTE_BYTES } from "./tdx-quote.js";
export { VERIFIER_RETRY_AFTER_SECONDS, verifierUnavailable } from "./verifier-unavailable.js";
export { decidedVerification, verifyAttestation } from "./verify-attestation.js";
export { type VmAttestationInput, vmAttestation } from "./vm-attestation.js";
