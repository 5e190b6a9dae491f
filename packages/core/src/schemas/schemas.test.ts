import { describe, expect, it } from "vitest";
import { validateValue } from "../http/validation.js";
import { BrokerRunRequest } from "./broker.js";
import { ChallengeCreate, ChallengeUpdate } from "./registry.js";

const base = { slug: "my-challenge", name: "Mine", image: "ghcr.io/org/img:1.0", version: "1.0" };

describe("shared schemas", () => {
  it("fills ChallengeCreate defaults", () => {
    const result = validateValue<Record<string, unknown>>(ChallengeCreate, base, "body");
    expect(result).toEqual({
      ok: true,
      value: { ...base, emission_percent: 0, api_version: "1.0" },
    });
  });

  it.each(["A-upper", "-lead", "trail-", "x", "under_score", "sp ace", "a".repeat(64)])(
    "refuses slug %j",
    (slug) => {
      const result = validateValue(ChallengeCreate, { ...base, slug }, "body");
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.issues[0]!.loc).toEqual(["body", "slug"]);
    },
  );

  it("refuses unknown fields and an out-of-range emission", () => {
    expect(validateValue(ChallengeCreate, { ...base, admin: true }, "body").ok).toBe(false);
    expect(validateValue(ChallengeCreate, { ...base, emission_percent: 101 }, "body").ok).toBe(
      false,
    );
    expect(
      validateValue(ChallengeCreate, { ...base, volumes: { data: "relative/path" } }, "body").ok,
    ).toBe(false);
  });

  it("makes every update field optional but keeps the slug out", () => {
    expect(validateValue(ChallengeUpdate, {}, "body").ok).toBe(true);
    expect(validateValue(ChallengeUpdate, { slug: "other" }, "body").ok).toBe(false);
  });

  it("bounds the broker timeout to 1..86400 seconds and defaults it", () => {
    const run = { job_id: "job-1", image: "alpine:3" };
    const ok = validateValue<{ timeout_seconds: number; gpus: number }>(
      BrokerRunRequest,
      run,
      "body",
    );
    expect(ok.ok && ok.value.timeout_seconds).toBe(3600);
    expect(validateValue(BrokerRunRequest, { ...run, timeout_seconds: 0 }, "body").ok).toBe(false);
    expect(validateValue(BrokerRunRequest, { ...run, timeout_seconds: 86_401 }, "body").ok).toBe(
      false,
    );
    expect(validateValue(BrokerRunRequest, { ...run, job_id: "../x" }, "body").ok).toBe(false);
  });
});

describe("records with patterned keys", () => {
  const run = { job_id: "job-1", image: "alpine:3" };
  it.each([
    ["an env name with '='", { env: { "A=B": "x" } }],
    ["an env name starting with a digit", { env: { "1X": "x" } }],
    ["a label key with a space", { labels: { "BAD KEY": "x" } }],
  ])("refuses %s in a broker run", (_label, extra) => {
    const result = validateValue(BrokerRunRequest, { ...run, ...extra }, "body");
    expect(result.ok).toBe(false);
  });

  it("accepts well-formed keys", () => {
    expect(
      validateValue(
        BrokerRunRequest,
        { ...run, env: { MODE: "x" }, labels: { "app.tier": "gpu" } },
        "body",
      ).ok,
    ).toBe(true);
  });

  it("refuses bad env, secret and volume names in a challenge", () => {
    for (const extra of [
      { env: { "A B": "x" } },
      { secrets: { "no-dash": "x" } },
      { volumes: { "../up": "/data" } },
    ]) {
      expect(validateValue(ChallengeCreate, { ...base, ...extra }, "body").ok).toBe(false);
    }
    expect(
      validateValue(
        ChallengeCreate,
        { ...base, env: { MODE: "x" }, secrets: { API_KEY: "s" }, volumes: { data: "/data" } },
        "body",
      ).ok,
    ).toBe(true);
  });
});

describe("ChallengeUpdate", () => {
  it("leaves out what the body leaves out: no create default sneaks into a PATCH", () => {
    const result = validateValue<Record<string, unknown>>(
      ChallengeUpdate,
      { internal_base_url: "http://x:1" },
      "body",
    );
    expect(result).toEqual({ ok: true, value: { internal_base_url: "http://x:1" } });
  });
});
