// Attestation: the TDX v4 quote format, quote verifiers (Intel DCAP with a pluggable chain of
// trust, and a non-confidential development verifier), and the report_data bindings.
export { p256PublicKeyFromRaw, rawP256PublicKey } from "./attestation-key.js";
export {
  type CollateralVerdict,
  type CollateralVerifier,
  unavailableCollateralVerifier,
} from "./collateral-verifier.js";
export { type DcapVerifierOptions, dcapVerifier } from "./dcap-verifier.js";
export {
  DEV_CERTIFICATION_DATA,
  DEV_CERTIFICATION_DATA_TYPE,
  DEV_MEASUREMENT,
  type DevAttestationKey,
  type DevQuoteRequest,
  defaultDevAttestationKeyPath,
  devAttestationKeyFromPem,
  loadDevAttestationKey,
  signDevQuote,
} from "./dev-quote.js";
export { type DevVerifierOptions, devVerifier } from "./dev-verifier.js";
export {
  type EventLogEntry,
  MAX_EVENT_LOG_ENTRIES,
  MEASUREMENT_BYTES,
  measuredEvent,
  RTMR_COUNT,
  replayEventLog,
} from "./event-log.js";
export { normalizeMeasurementAllowList } from "./measurement-allowlist.js";
export { TdxQuoteError, type TdxQuoteErrorCode } from "./quote-error.js";
export {
  type ExpectedQuote,
  type QuoteRejection,
  type QuoteUnavailable,
  type QuoteVerdict,
  type QuoteVerifier,
  REPORT_DATA_BYTES,
} from "./quote-verifier.js";
export {
  EVAL_RESULT_REPORT_DATA_DOMAIN,
  type EvalResultReportDataInput,
  evalResultReportData,
  REVIEW_REPORT_DATA_DOMAIN,
  type ReviewReportDataInput,
  reviewReportData,
} from "./report-data.js";
export {
  INTEL_QE_VENDOR_ID,
  MAX_TDX_QUOTE_BYTES,
  type ParsedTdxQuote,
  parseTdxQuote,
  serializeTdxQuote,
  type TdQuoteBody,
  type TdxQuoteHeader,
  type TdxQuoteParts,
  type TdxQuoteSignatureData,
} from "./tdx-quote.js";
export {
  type AttestationBlock,
  type AttestationVerdict,
  verifyAttestation,
} from "./verify-attestation.js";
export { type VmAttestationInput, vmAttestation } from "./vm-attestation.js";
