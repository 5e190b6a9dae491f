// A refusal of malformed quote bytes. The code is stable (callers and stored verdicts key on it);
// the message is for humans and may change.

export type TdxQuoteErrorCode =
  /** The bytes end before a fixed field or before a declared length is satisfied. */
  | "quote_truncated"
  /** More bytes than any real quote carries: refused before any parsing work. */
  | "quote_too_large"
  | "quote_version_unsupported"
  | "quote_key_type_unsupported"
  | "quote_tee_type_unsupported"
  /** A length field disagrees with the bytes around it (trailing bytes, inner size overflow). */
  | "quote_length_mismatch";

export class TdxQuoteError extends Error {
  override readonly name = "TdxQuoteError";
  constructor(
    readonly code: TdxQuoteErrorCode,
    message: string,
  ) {
    super(message);
  }
}
