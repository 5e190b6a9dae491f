import { describe, expect, it } from "vitest";
import { resolveSettings } from "../../settings.js";
import { DEFAULT_ACCEPTED_TCB_STATUSES, parseAcceptedTcbStatuses } from "./tcb-policy.js";

const baseConfig = {
  SECRET_KEY_GENERATE: true,
  ATTESTATION_VERIFIER: "dcap" as const,
  SUBMISSION_WINDOW_SECONDS: 0,
  REPLAY_AUDIT_RATE: 0,
  TRUSTED_PROXIES: "none",
  WEIGHTS_MODE: "winner_take_all" as const,
  DCAP_COLLATERAL_TIMEOUT_MS: 10_000,
  DCAP_COLLATERAL_REFRESH_SECONDS: 3600,
};

describe("the accepted TCB statuses", () => {
  it("default to UpToDate and SWHardeningNeeded", () => {
    expect(parseAcceptedTcbStatuses(undefined)).toEqual(["UpToDate", "SWHardeningNeeded"]);
    expect(parseAcceptedTcbStatuses(" ")).toBe(DEFAULT_ACCEPTED_TCB_STATUSES);
  });

  it("take a comma-separated list, and never Revoked or an unknown name", () => {
    expect(parseAcceptedTcbStatuses("UpToDate, OutOfDate,UpToDate")).toEqual([
      "UpToDate",
      "OutOfDate",
    ]);
    expect(() => parseAcceptedTcbStatuses("UpToDate,Revoked")).toThrow(/Revoked/);
    expect(() => parseAcceptedTcbStatuses("uptodate")).toThrow(/uptodate/);
  });

  it("are a configuration error naming the variable, like a PCCS URL without dcap", () => {
    expect(() =>
      resolveSettings(
        { ...baseConfig, ACCEPTED_TCB_STATUSES: "Revoked" },
        { tokenConfigured: false },
      ),
    ).toThrow(/ACCEPTED_TCB_STATUSES/);
    expect(() =>
      resolveSettings(
        { ...baseConfig, ATTESTATION_VERIFIER: "dev", DCAP_COLLATERAL_URL: "http://pccs" },
        { tokenConfigured: false },
      ),
    ).toThrow(/DCAP_COLLATERAL_URL/);
    const options = resolveSettings(
      {
        ...baseConfig,
        DCAP_COLLATERAL_URL: "https://pccs:8081",
        ACCEPTED_TCB_STATUSES: "OutOfDate",
      },
      { tokenConfigured: false },
    );
    expect(options.attestation).toMatchObject({
      collateralUrl: "https://pccs:8081",
      acceptedTcbStatuses: ["OutOfDate"],
    });
  });
});
