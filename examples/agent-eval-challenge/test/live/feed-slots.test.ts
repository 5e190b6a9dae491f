// The live feeds' shares: a bad TRUSTED_PROXIES is a configuration error at start (the client
// key itself is the SDK's, tested there); the shares refused in order, freed once.
import { describe, expect, it } from "vitest";
import { FeedSlots } from "../../src/live/feed-slots.js";
import { resolveSettings } from "../../src/settings.js";

describe("TRUSTED_PROXIES", () => {
  it("is a configuration error naming the variable when an entry is bad", () => {
    const config = {
      SECRET_KEY_GENERATE: true,
      ATTESTATION_VERIFIER: "dev" as const,
      SUBMISSION_WINDOW_SECONDS: 0,
      REPLAY_AUDIT_RATE: 0,
      TRUSTED_PROXIES: "loopback, localhost",
      WEIGHTS_MODE: "winner_take_all" as const,
      DCAP_COLLATERAL_TIMEOUT_MS: 10_000,
      DCAP_COLLATERAL_REFRESH_SECONDS: 3600,
    };
    expect(() => resolveSettings(config, { tokenConfigured: false })).toThrow(/TRUSTED_PROXIES/);
    expect(
      resolveSettings({ ...config, TRUSTED_PROXIES: "none" }, { tokenConfigured: false })
        .trustedProxies,
    ).toBe("none");
  });
});

describe("the feed slots", () => {
  it("refuses past a client's share, a submission's, then the pool; frees a slot once", () => {
    const slots = new FeedSlots({ total: 4, perClient: 2, perSubmission: 2 });
    const a1 = slots.take("a", 1);
    if ("refused" in a1) throw new Error("the first slot was refused");
    expect(slots.take("a", 2)).not.toHaveProperty("refused");
    expect(slots.take("a", 3)).toEqual({ refused: "client" });
    expect(slots.take("b", 1)).not.toHaveProperty("refused");
    expect(slots.take("c", 1)).toEqual({ refused: "submission" });
    expect(slots.take("c", 3)).not.toHaveProperty("refused");
    expect(slots.take("d", 4)).toEqual({ refused: "total" });
    expect(slots.count()).toBe(4);
    a1.release();
    a1.release();
    expect(slots.count()).toBe(3);
    expect(slots.count("a")).toBe(1);
    expect(slots.take("c", 1)).not.toHaveProperty("refused");
  });
});
