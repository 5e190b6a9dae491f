import { ConfigError } from "@platform/challenge-sdk";
import { startTestChallenge } from "@platform/challenge-sdk/testing";
import { describe, expect, it } from "vitest";
import { challenge } from "./challenge.js";
import type { ScoringState } from "./scoring-state.js";
import { resolveSettings, type Settings } from "./settings.js";

const defaults: Settings = {
  WORKER_ENABLED: true,
  WORKER_CONCURRENCY: 1,
  LLM_GATE: "required",
  LLM_API_KEY: "",
  LLM_TIMEOUT_SECONDS: 60,
  EVAL_IMAGE: "platform/scoring-eval:local",
  EVAL_IMAGE_PULL: false,
  EPOCH_SECONDS: 21_600,
  TOKEN_BUDGET: 131_072,
  STEP_BUDGET: 4096,
  MEMORY_MB: 2048,
  HOLDOUT_BYTES: 65_536,
  WINDOW_BYTES: 127,
  RUN_TIMEOUT_SECONDS: 1800,
  GPU_COUNT: 0,
  GPU_TIER: "default",
  GPU_WAIT_SECONDS: 60,
};
const standalone = { masterUrl: null, brokerToken: null };
const underMaster = { masterUrl: "http://master:8080", brokerToken: "broker-token" };

describe("resolveSettings", () => {
  it("runs on the local engine alone, and through the broker under a master", () => {
    expect(resolveSettings(defaults, standalone).executor).toBe("docker");
    expect(resolveSettings(defaults, underMaster).executor).toBe("broker");
    expect(resolveSettings({ ...defaults, EXECUTOR: "docker" }, underMaster).executor).toBe(
      "docker",
    );
  });

  it("refuses the broker without the master's URL and token, and a reviewer without a model", () => {
    const error = (() => {
      try {
        resolveSettings(
          { ...defaults, EXECUTOR: "broker", LLM_BASE_URL: "http://llm/v1" },
          standalone,
        );
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((issue) => issue.variable)).toEqual([
      "EXECUTOR",
      "LLM_MODEL",
    ]);
  });

  it("fails closed: LLM_GATE=required with no reviewer is a gate with no provider, never off", () => {
    expect(resolveSettings(defaults, standalone).llm).toEqual({ mode: "required", provider: null });
    expect(resolveSettings({ ...defaults, LLM_GATE: "off" }, standalone).llm).toEqual({
      mode: "off",
    });
    const configured = resolveSettings(
      { ...defaults, LLM_BASE_URL: "https://llm.example/v1/", LLM_MODEL: "m", LLM_API_KEY: "k" },
      standalone,
    );
    expect(configured.llm).toEqual({
      mode: "required",
      provider: { baseUrl: "https://llm.example/v1", apiKey: "k", model: "m" },
    });
  });
});

describe("the challenge's environment", () => {
  it("starts with the documented defaults", async () => {
    const t = await startTestChallenge(challenge, { env: { WORKER_ENABLED: "false" } });
    try {
      const { options } = t.runtime.state as ScoringState;
      expect(options).toMatchObject({
        executor: "docker",
        image: "platform/scoring-eval:local",
        llm: { mode: "required", provider: null },
        epochSeconds: 21_600,
        budgets: { tokenBudget: 131_072, stepBudget: 4096, memoryMb: 2048 },
        gpu: { count: 0 },
        worker: { enabled: false, concurrency: 1 },
        holdoutBytes: 65_536,
        scoredBytes: {
          corpusDir: null,
          windowBytes: 127,
          secret: null,
          memorisationToleranceBpb: null,
        },
      });
    } finally {
      await t.close();
    }
  });

  it("refuses to start on a bad environment, naming every bad variable", async () => {
    const refused = await startTestChallenge(challenge, {
      env: { LLM_GATE: "maybe", TOKEN_BUDGET: "12", EXECUTOR: "broker" },
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    const message = (refused as Error).message;
    expect(message).toContain('LLM_GATE: must be one of "required", "off"');
    expect(message).toContain("TOKEN_BUDGET");
    const broker = await startTestChallenge(challenge, { env: { EXECUTOR: "broker" } }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(broker).toBeInstanceOf(ConfigError);
    expect((broker as Error).message).toContain("EXECUTOR: broker needs PLATFORM_MASTER_URL");
  });

  it("refuses a window secret that is not 32-64 bytes of lowercase hex, without echoing it", async () => {
    for (const secret of [
      "ab".repeat(31),
      "AB".repeat(32),
      `${"ab".repeat(32)}a`,
      "ab".repeat(65),
    ]) {
      const refused = await startTestChallenge(challenge, {
        env: { SCORING_WINDOW_SECRET: secret, WINDOW_BYTES: "15" },
      }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused, secret).toBeInstanceOf(ConfigError);
      const message = (refused as Error).message;
      expect(message).toContain("SCORING_WINDOW_SECRET");
      expect(message).toContain("WINDOW_BYTES");
      expect(message).not.toContain(secret);
    }
  });
});
