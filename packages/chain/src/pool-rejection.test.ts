import { describe, expect, it } from "vitest";
import { CUSTOM_TRANSACTION_ERRORS, poolRejection } from "./pool-rejection.js";

describe("pool rejections", () => {
  it("names Custom(n) as subtensor's CustomTransactionError does", () => {
    // common/src/transaction_error.rs `impl From<CustomTransactionError> for u8`, identical at
    // opentensor/subtensor v3.3.13-393 and v3.4.9-424 for the numbers below.
    const numbers: Record<string, number> = {
      ColdkeyInSwapSchedule: 0,
      StakeAmountTooLow: 1,
      BalanceTooLow: 2,
      SubnetNotExists: 3,
      RateLimitExceeded: 6,
      HotKeyNotRegisteredInNetwork: 10,
      BadRequest: 255,
      ZeroMaxAmount: 14,
      InvalidRevealRound: 15,
      CommitNotFound: 16,
      CommitBlockNotInRevealRange: 17,
      InputLengthsUnequal: 18,
      UidNotFound: 19,
      InvalidShieldedTxPubKeyHash: 24,
    };
    for (const [name, n] of Object.entries(numbers)) {
      expect(CUSTOM_TRANSACTION_ERRORS[n]?.name).toBe(name);
    }
  });

  it("maps the node's 1010 answer to the named cause and what to do", () => {
    // What @polkadot reports for a substrate node's refusal: code 1010, the sp_runtime text in data.
    const rate = poolRejection({
      code: "1010",
      name: "Custom error: 6",
      message: "1010: Invalid Transaction: Custom error: 6",
    });
    expect(rate).toMatchObject({ code: 1010, custom: 6, name: "RateLimitExceeded" });
    expect(rate?.message).toMatch(
      /Custom error: 6 \(RateLimitExceeded\).*WeightsSetRateLimit.*rate limit has passed/,
    );
    // The spelling, Custom(1).
    const stake = poolRejection({
      code: 1010,
      name: "Invalid Transaction",
      message: "1010 Invalid Transaction: Custom(1)",
    });
    expect(stake).toMatchObject({ custom: 1, name: "StakeAmountTooLow" });
    expect(stake?.message).toMatch(/StakeThreshold.*stake more/);
    // 15 keeps "Custom error: 15" in its message (the validator loop retries a late commit by it).
    expect(
      poolRejection({ code: "1010", name: "Custom error: 15", message: "Invalid Transaction" })
        ?.message,
    ).toMatch(/Custom error: 15\b/);
  });

  it("leaves sp_runtime's own refusals and unknown numbers recognisable", () => {
    expect(
      poolRejection({
        code: "1010",
        name: "Transaction is outdated",
        message: "1010: Invalid Transaction",
      }),
    ).toMatchObject({ custom: null, name: "Transaction is outdated" });
    expect(
      poolRejection({
        code: "1010",
        name: "Custom error: 200",
        message: "1010: Invalid Transaction",
      }),
    ).toMatchObject({ custom: 200, name: "Custom(200)" });
    expect(
      poolRejection({ code: "1014", name: "Priority is too low", message: "x" }),
    ).toMatchObject({
      code: 1014,
      custom: null,
    });
    expect(poolRejection({ code: "module", name: "X", message: "y" })).toBeUndefined();
  });
});
