// The eval worker's environment: what it needs is checked whole before any network call, every
// problem named, and no value (the run token, the grant) ever echoed.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_AGENT_IMAGE,
  DEFAULT_TRIAL_TIMEOUT_SECONDS,
  EvalWorkerSettingsError,
  loadEvalWorkerSettings,
} from "../../src/eval-worker/eval-worker-settings.js";

const RUN_TOKEN = `AbCdEfGhIjKlMnOpQrStUvWx.${"s".repeat(43)}`;
const GRANT = JSON.stringify({
  hotkey_ss58: "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY",
  signature: `0x${"ab".repeat(64)}`,
  nonce: "nonce-secret-value-1",
  timestamp: "1790000000",
});
const OWN_FILE = new URL(import.meta.url).pathname;

const load = (env: Record<string, string>) => loadEvalWorkerSettings(env, OWN_FILE);
const problemsOf = (env: Record<string, string>): string => {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(EvalWorkerSettingsError);
    return (error as Error).message;
  }
  throw new Error("the settings were accepted");
};

describe("the eval worker's settings", () => {
  const good = { EVAL_RUN_TOKEN: RUN_TOKEN, TELEMETRY_GRANT: GRANT, CHALLENGE_URL: "http://h:1/" };

  it("reads a complete environment, with defaults for the image and the deadline", () => {
    const settings = load(good);
    expect(settings).toMatchObject({
      token: RUN_TOKEN,
      runId: "AbCdEfGhIjKlMnOpQrStUvWx",
      challengeUrl: "http://h:1",
      agentImage: DEFAULT_AGENT_IMAGE,
      trialTimeoutSeconds: DEFAULT_TRIAL_TIMEOUT_SECONDS,
      devAttestationKeyFile: undefined,
      grant: JSON.parse(GRANT),
    });
    expect(settings.imageDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(
      load({
        ...good,
        AGENT_IMAGE: "platform/agent-eval-agent:abc",
        EVAL_TRIAL_TIMEOUT_SECONDS: "5",
        CHALLENGE_URL: "http://master:8080/challenges/agent-eval",
      }),
    ).toMatchObject({
      agentImage: "platform/agent-eval-agent:abc",
      trialTimeoutSeconds: 5,
      challengeUrl: "http://master:8080/challenges/agent-eval",
    });
  });

  it("names every missing variable at once", () => {
    const message = problemsOf({});
    expect(message).toContain("EVAL_RUN_TOKEN is required");
    expect(message).toContain("TELEMETRY_GRANT is required");
    expect(message).toContain("CHALLENGE_URL is required");
  });

  it("refuses malformed values without echoing them", () => {
    const message = problemsOf({
      EVAL_RUN_TOKEN: "not a token secret-part",
      TELEMETRY_GRANT: JSON.stringify({ hotkey_ss58: "x", signature: "secret-signature" }),
      CHALLENGE_URL: "http://user:secret-password@h/",
      EVAL_TRIAL_TIMEOUT_SECONDS: "0",
    });
    expect(message).toContain("EVAL_RUN_TOKEN is not a run token");
    expect(message).toContain("TELEMETRY_GRANT must be");
    expect(message).toContain("CHALLENGE_URL must carry no query, fragment or credentials");
    expect(message).toContain("EVAL_TRIAL_TIMEOUT_SECONDS must be whole seconds");
    expect(message).not.toMatch(/secret/);
  });

  it.each([
    [
      "a grant that is not JSON",
      { TELEMETRY_GRANT: "{nonce-secret" },
      "TELEMETRY_GRANT is not JSON",
    ],
    [
      "a grant with a non-decimal timestamp",
      { TELEMETRY_GRANT: JSON.stringify({ ...JSON.parse(GRANT), timestamp: "soon" }) },
      "TELEMETRY_GRANT must be",
    ],
    ["a ftp challenge URL", { CHALLENGE_URL: "ftp://h/" }, "CHALLENGE_URL must be http or https"],
    [
      "a deadline past an hour",
      { EVAL_TRIAL_TIMEOUT_SECONDS: "3601" },
      "EVAL_TRIAL_TIMEOUT_SECONDS",
    ],
    ["a fractional deadline", { EVAL_TRIAL_TIMEOUT_SECONDS: "1.5" }, "EVAL_TRIAL_TIMEOUT_SECONDS"],
    [
      "an image with a space",
      { AGENT_IMAGE: "bad image" },
      "AGENT_IMAGE is not an image reference",
    ],
    ["a bad image digest", { EVAL_VM_IMAGE_DIGEST: "sha256:xyz" }, "EVAL_VM_IMAGE_DIGEST"],
  ])("refuses %s", (_, override, problem) => {
    expect(problemsOf({ ...good, ...override })).toContain(problem);
  });
});
