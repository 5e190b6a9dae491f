/**
 * A refusal at the transaction pool, with the JSON-RPC code, message and data a substrate node
 * answers (sc-rpc-api `author::error`): 1010 "Invalid Transaction" carries sp_runtime's
 * `InvalidTransaction` text in `data`.
 */
export class PoolError extends Error {
  override readonly name = "PoolError";
  readonly code: number;
  readonly data: string | undefined;

  constructor(code: number, message: string, data?: string) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** sp_runtime `InvalidTransaction` variants and the text a node puts in the 1010 error's data. */
export const INVALID_TRANSACTION = {
  Call: "Transaction call is not expected",
  Payment: "Inability to pay some fees (e.g. account balance too low)",
  Future: "Transaction will be valid in the future",
  Stale: "Transaction is outdated",
  BadProof: "Transaction has a bad signature",
  AncientBirthBlock: "Transaction has an ancient birth block",
  ExhaustsResources: "Transaction would exhaust the block limits",
  BadMandatory: "A call was labelled as mandatory, but resulted in an Error.",
  MandatoryValidation: "Transaction dispatch is mandatory; transactions must not be validated.",
  BadSigner: "Invalid signing address",
  IndeterminateImplicit: "The implicit data was unable to be calculated",
  UnknownOrigin: "The transaction extension did not authorize any origin",
} as const;

/** An `InvalidTransaction` variant name. */
export type InvalidTransactionName = keyof typeof INVALID_TRANSACTION;

/** 1010 for an `InvalidTransaction` variant, or `Custom(n)` as "Custom error: n". */
export function invalidTransaction(reason: InvalidTransactionName | { custom: number }): PoolError {
  const data =
    typeof reason === "string" ? INVALID_TRANSACTION[reason] : `Custom error: ${reason.custom}`;
  return new PoolError(1010, "Invalid Transaction", data);
}

/** 1011: the pool cannot tell whether the transaction is valid (`UnknownTransaction`). */
export function unknownTransaction(reason: "CannotLookup" | "NoUnsignedValidator"): PoolError {
  return new PoolError(1011, "Unknown Transaction Validity", reason);
}

/** 1001: the bytes are not an extrinsic of this runtime. */
export function badFormat(detail: string): PoolError {
  return new PoolError(1001, `Extrinsic has invalid format: ${detail}`);
}

/** 1013: the same transaction (same hash) is already in the pool. */
export function alreadyImported(hash: string): PoolError {
  return new PoolError(1013, "Transaction Already Imported", hash);
}

/** 1014: another transaction from the same sender with the same nonce is in the pool. */
export function tooLowPriority(): PoolError {
  return new PoolError(
    1014,
    "Priority is too low: (0 vs 0)",
    "The transaction has too low priority to replace another transaction already in the pool.",
  );
}

/** 1016: the pool is full. */
export function immediatelyDropped(): PoolError {
  return new PoolError(
    1016,
    "Immediately Dropped",
    "The transaction couldn't enter the pool because of the limit",
  );
}

/**
 * The pool error a `dev_fault` `reject_next` names: an `InvalidTransaction` variant (`Stale`),
 * its text, or `Custom:<n>`. Undefined when `name` is none of these (then it is a module error).
 */
export function namedPoolError(name: string): PoolError | undefined {
  if (Object.hasOwn(INVALID_TRANSACTION, name)) {
    return invalidTransaction(name as InvalidTransactionName);
  }
  const byText = Object.entries(INVALID_TRANSACTION).find(([, text]) => text === name);
  if (byText) return invalidTransaction(byText[0] as InvalidTransactionName);
  const custom = /^Custom:(\d{1,3})$/.exec(name);
  if (custom && Number(custom[1]) < 256) return invalidTransaction({ custom: Number(custom[1]) });
  return undefined;
}

/**
 * subtensor's `CustomTransactionError` codes the local chain answers with (common/src/
 * transaction_error.rs): what `SubtensorTransactionExtension` refuses a weights call with.
 */
export const CUSTOM_TRANSACTION_ERROR = {
  /** `NotEnoughStakeToSetWeights` at the pool (spec 424). */
  StakeAmountTooLow: 1,
  /** `SettingWeightsTooFast` / `CommittingWeightsTooFast` at the pool (spec 424). */
  RateLimitExceeded: 6,
  /** A commit to a drand round below `Drand.LastStoredRound`. */
  InvalidRevealRound: 15,
} as const;
