import { describe, expect, it } from "vitest";
import { loadWorkerSettings, WorkerSettingsError } from "./worker-settings.js";

const TOKEN = `assignment_1.${"A".repeat(43)}`;

describe("loadWorkerSettings", () => {
  it("takes the assignment id from the token and trims the URL", () => {
    const settings = loadWorkerSettings({
      REVIEW_SESSION_TOKEN: TOKEN,
      CHALLENGE_URL: "http://127.0.0.1:8080/challenges/agent-eval/",
    });
    expect(settings).toMatchObject({
      assignmentId: "assignment_1",
      challengeUrl: "http://127.0.0.1:8080/challenges/agent-eval",
      model: null,
    });
    expect(settings.imageDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("reads the model's host from MODEL_BASE_URL", () => {
    const settings = loadWorkerSettings({
      REVIEW_SESSION_TOKEN: TOKEN,
      CHALLENGE_URL: "http://127.0.0.1:1",
      MODEL_BASE_URL: "https://api.example.com/v1/",
      MODEL_NAME: "gpt-4o-mini",
      REVIEW_VM_IMAGE_DIGEST: `sha256:${"a".repeat(64)}`,
    });
    expect(settings.model).toEqual({
      baseUrl: "https://api.example.com/v1",
      apiKey: undefined,
      model: "gpt-4o-mini",
      endpointHost: "api.example.com",
    });
  });

  it("lists every problem and never a value", () => {
    let error: unknown;
    try {
      loadWorkerSettings({
        REVIEW_SESSION_TOKEN: "secret-value",
        CHALLENGE_URL: "ftp://x",
        MODEL_BASE_URL: "https://user:pw@api.example.com",
        REVIEW_VM_IMAGE_DIGEST: "latest",
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(WorkerSettingsError);
    const message = (error as Error).message;
    expect(message).toContain("REVIEW_SESSION_TOKEN is not an assignment token");
    expect(message).toContain("CHALLENGE_URL must be http or https");
    expect(message).toContain("MODEL_BASE_URL must carry no query, fragment or credentials");
    expect(message).toContain("REVIEW_VM_IMAGE_DIGEST");
    expect(message).not.toContain("secret-value");
    expect(message).not.toContain("pw");
  });
});
