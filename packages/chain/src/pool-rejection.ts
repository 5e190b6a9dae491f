// A node's transaction pool refuses an extrinsic before any block sees it with JSON-RPC error 1010
// "Invalid Transaction" and, for subtensor's own checks, `InvalidTransaction::Custom(n)` ("Custom
// error: n" in the error's data). `n` is subtensor's `CustomTransactionError`
// (common/src/transaction_error.rs, the same numbers at v3.3.13-393 and v3.4.9-424); the
// `SubtensorTransactionExtension` maps the pallet errors of its guards onto it
// (extensions/subtensor.rs): the minimum stake (check_weights.rs) on every weights call, and since
// spec 423's guards the rate limit of set_weights (check_rate_limits.rs).

/** A `CustomTransactionError`, what it means for a weights extrinsic, and what to do. */
export interface CustomTransactionErrorInfo {
  /** The variant's name, as the chain names it. */
  name: string;
  /** What the pool found. */
  cause: string;
  /** What the operator does about it. */
  remedy: string;
}

/** subtensor's `CustomTransactionError` by its `Custom(n)` number. */
export const CUSTOM_TRANSACTION_ERRORS: Readonly<Record<number, CustomTransactionErrorInfo>> = {
  0: {
    name: "ColdkeyInSwapSchedule",
    cause: "the signing account's coldkey is scheduled for a swap",
    remedy: "wait until the coldkey swap completes",
  },
  1: {
    name: "StakeAmountTooLow",
    cause: "the hotkey's stake on the subnet is below StakeThreshold (check_weights_min_stake)",
    remedy: "stake more to the validator's hotkey (alpha on this subnet, or TAO on root)",
  },
  2: {
    name: "BalanceTooLow",
    cause: "the account's balance is too low",
    remedy: "fund the account",
  },
  3: {
    name: "SubnetNotExists",
    cause: "the subnet does not exist",
    remedy: "check the netuid",
  },
  4: {
    name: "HotkeyAccountDoesntExist",
    cause: "the hotkey account does not exist",
    remedy: "check the hotkey",
  },
  5: {
    name: "NotEnoughStakeToWithdraw",
    cause: "not enough stake to withdraw",
    remedy: "withdraw less",
  },
  6: {
    name: "RateLimitExceeded",
    cause: "WeightsSetRateLimit blocks have not passed since the hotkey's LastUpdate",
    remedy: "nothing to fix: the next attempt goes once the rate limit has passed",
  },
  7: {
    name: "InsufficientLiquidity",
    cause: "the subnet's pool lacks liquidity",
    remedy: "retry later",
  },
  8: { name: "SlippageTooHigh", cause: "slippage too high", remedy: "retry with a looser limit" },
  9: { name: "TransferDisallowed", cause: "transfer disallowed", remedy: "check the subnet" },
  10: {
    name: "HotKeyNotRegisteredInNetwork",
    cause: "the hotkey is not registered on the network",
    remedy: "register the hotkey",
  },
  11: { name: "InvalidIpAddress", cause: "invalid IP address", remedy: "fix the axon address" },
  12: {
    name: "ServingRateLimitExceeded",
    cause: "serving rate limit exceeded",
    remedy: "retry later",
  },
  13: { name: "InvalidPort", cause: "invalid port", remedy: "fix the axon port" },
  14: { name: "ZeroMaxAmount", cause: "zero max amount", remedy: "check the amount" },
  15: {
    name: "InvalidRevealRound",
    cause: "the commit's drand round is older than Drand.LastStoredRound: it arrived too late",
    remedy: "nothing to fix: the commit is rebuilt for a later round",
  },
  16: {
    name: "CommitNotFound",
    cause: "no commit matches this reveal",
    remedy: "commit again",
  },
  17: {
    name: "CommitBlockNotInRevealRange",
    cause: "the reveal is outside its commit's reveal epoch",
    remedy: "commit again",
  },
  18: {
    name: "InputLengthsUnequal",
    cause: "batched inputs differ in length",
    remedy: "a bug: report it",
  },
  19: {
    name: "UidNotFound",
    cause: "the hotkey has no uid on the subnet",
    remedy: "register the hotkey on the subnet",
  },
  20: {
    name: "EvmKeyAssociateRateLimitExceeded",
    cause: "EVM key association rate limited",
    remedy: "retry later",
  },
  21: {
    name: "ColdkeySwapDisputed",
    cause: "the coldkey swap is disputed",
    remedy: "resolve the coldkey swap",
  },
  22: { name: "InvalidRealAccount", cause: "invalid real account (proxy)", remedy: "check it" },
  23: {
    name: "FailedShieldedTxParsing",
    cause: "a shielded transaction did not parse",
    remedy: "a bug: report it",
  },
  24: {
    name: "InvalidShieldedTxPubKeyHash",
    cause: "a shielded transaction names an unknown key",
    remedy: "a bug: report it",
  },
  25: {
    name: "NonAssociatedColdKey",
    cause: "the coldkey is not associated with the hotkey",
    remedy: "check the keys",
  },
  26: { name: "DelegateTakeTooLow", cause: "delegate take too low", remedy: "raise it" },
  27: { name: "DelegateTakeTooHigh", cause: "delegate take too high", remedy: "lower it" },
  255: {
    name: "BadRequest",
    cause: "the runtime refused the call (BadRequest)",
    remedy: "check the call and the chain's logs",
  },
};

/** A pool refusal read from a JSON-RPC error. */
export interface PoolRejection {
  /** The JSON-RPC code (1010 for an invalid transaction). */
  code: number;
  /** `n` of `Custom(n)`, or null for sp_runtime's own variants (Stale, Future, Payment...). */
  custom: number | null;
  /** `RateLimitExceeded`, `StakeAmountTooLow`...; the node's text for anything else. */
  name: string;
  /** What happened and what to do, for the record and the logs. */
  message: string;
}

const CUSTOM = /Custom(?:\s+error)?\s*[:(]\s*(\d{1,3})\)?/i;

/**
 * Names a pool refusal: `1010 Invalid Transaction: Custom(6)` (or the node's "Custom error: 6")
 * becomes `RateLimitExceeded`, with what it means and what to do. Undefined for an error that
 * is not a JSON-RPC refusal.
 */
export function poolRejection(error: {
  code: string | number;
  name: string;
  message: string;
}): PoolRejection | undefined {
  const code = Number(error.code);
  if (!Number.isInteger(code) || code <= 0) return undefined;
  const text = `${error.name} ${error.message}`;
  const match = code === 1010 ? CUSTOM.exec(text) : null;
  if (!match) return { code, custom: null, name: error.name, message: error.message };
  const custom = Number(match[1]);
  const known = CUSTOM_TRANSACTION_ERRORS[custom];
  if (!known) {
    return {
      code,
      custom,
      name: `Custom(${custom})`,
      message: `${code} Invalid Transaction: Custom error: ${custom} (not a CustomTransactionError this validator knows)`,
    };
  }
  return {
    code,
    custom,
    name: known.name,
    message: `${code} Invalid Transaction: Custom error: ${custom} (${known.name}): ${known.cause}. ${known.remedy}`,
  };
}
