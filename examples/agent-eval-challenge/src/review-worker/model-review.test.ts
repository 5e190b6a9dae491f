import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  MAX_PROMPT_CONTENT_CHARS,
  ModelUnavailableError,
  NO_MODEL_REQUEST_BODY,
  parseOpinion,
  planModelCall,
  planNoModelCall,
} from "./model-review.js";

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const model = {
  baseUrl: "https://models.example/v1",
  apiKey: "sk-x",
  model: "reviewer-1",
  endpointHost: "models.example",
};
const answer = (content: unknown) =>
  Buffer.from(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));

describe("the planned model request", () => {
  it("binds the sha256 of the exact bytes it will send, never the API key", () => {
    const planned = planModelCall(
      "req-1",
      model,
      [{ path: "a.py", data: Buffer.from("x = 1\n") }],
      [],
    );
    expect(planned.record).toEqual({
      request_id: "req-1",
      provider: "openai-compatible",
      model: "reviewer-1",
      endpoint_host: "models.example",
      request_sha256: sha256(planned.body!),
    });
    expect(planned.body!.toString()).toContain("a.py");
    expect(planned.body!.toString()).not.toContain("sk-x");
  });

  it("shows at most MAX_PROMPT_CONTENT_CHARS of file text", () => {
    const big = Buffer.from("y".repeat(MAX_PROMPT_CONTENT_CHARS * 2));
    const planned = planModelCall("req-1", model, [{ path: "big.py", data: big }], []);
    const content = JSON.parse(planned.body!.toString()).messages[1].content as string;
    expect(content.length).toBeLessThan(MAX_PROMPT_CONTENT_CHARS + 1000);
    expect(content).toContain(`${MAX_PROMPT_CONTENT_CHARS} more characters`);
  });

  it("without a model, binds the fixed no-model body and sends nothing", () => {
    const planned = planNoModelCall("req-2");
    expect(planned.body).toBeNull();
    expect(planned.record).toEqual({
      request_id: "req-2",
      provider: "none",
      model: "none",
      endpoint_host: "none",
      request_sha256: sha256(NO_MODEL_REQUEST_BODY),
    });
  });
});

describe("parseOpinion", () => {
  it("reads the JSON verdict in the message content, fenced or not", () => {
    expect(parseOpinion(answer('{"verdict":"allow","reasons":[]}'))).toEqual({
      verdict: "allow",
      reasons: [],
    });
    expect(
      parseOpinion(answer('```json\n{"verdict": "reject", "reasons": ["socket"]}\n```')),
    ).toEqual({
      verdict: "reject",
      reasons: ["socket"],
    });
  });

  it.each([
    ["not JSON", Buffer.from("<html>")],
    ["no content", answer(null)],
    ["no JSON in the content", answer("looks fine to me")],
    ["an unknown verdict", answer('{"verdict":"maybe"}')],
  ])("refuses %s as model_unavailable", (_, bytes) => {
    expect(() => parseOpinion(bytes)).toThrow(ModelUnavailableError);
  });
});
