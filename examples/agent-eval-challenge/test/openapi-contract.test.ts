// The contract's loose ends in /openapi.json (spec/agent-eval-challenge.md, "Endpoints"): every
// route declares a 422 answering HTTPValidationError, also the routes without inputs
// (GET /internal/v1/get_weights, GET /internal/v1/replay-audits/requests), and the named record
// WeightsResponse is among the components.
import { describe, expect, it } from "vitest";
import { challenge } from "../src/challenge.js";

type Operation = { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };

describe("agent-eval /openapi.json", () => {
  const document = challenge.openapi() as unknown as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> };
  };

  it("declares a 422 HTTPValidationError on every route", () => {
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const refusal = operation.responses["422"];
        expect(refusal, `${method.toUpperCase()} ${path}`).toBeDefined();
        expect(JSON.stringify(refusal), `${method.toUpperCase()} ${path}`).toContain(
          "HTTPValidationError",
        );
      }
    }
    for (const path of ["/internal/v1/get_weights", "/internal/v1/replay-audits/requests"]) {
      expect(Object.keys(document.paths[path]!["get"]!.responses)).toContain("422");
    }
  });

  it("names WeightsResponse among the components, in the shape get_weights answers", () => {
    expect(document.components.schemas["WeightsResponse"]).toMatchObject({
      type: "object",
      required: expect.arrayContaining(["challenge_slug", "weights"]),
      properties: { challenge_slug: {}, epoch: {}, weights: {} },
    });
  });
});
