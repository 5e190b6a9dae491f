// The review routes in /openapi.json: each declares its request and response records under the
// spec's names (ReviewPrepareResponse, ReviewRetryRequest, ReviewCancelRequest,
// ReviewApprovalRequest), its 422 HTTPValidationError, and its 4xx refusals.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";

interface Operation {
  requestBody?: { content: Record<string, { schema: { title?: string } }> };
  responses: Record<
    string,
    { content?: Record<string, { schema: { title?: string; $ref?: string } }> }
  >;
}

describe("review routes in the OpenAPI document", () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval("pglite");
  });
  afterAll(() => t?.close());

  it("declares every review record under its spec name, and each route's 422 and refusals", async () => {
    const doc = (await (await t.fetch("/openapi.json")).json()) as {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, { post: Operation }>;
    };
    for (const name of [
      "ReviewPrepareResponse",
      "ReviewRetryRequest",
      "ReviewCancelRequest",
      "ReviewApprovalRequest",
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    const routes: [string, string | null, string, string[]][] = [
      [
        "/submissions/{submission_id}/review/prepare",
        null,
        "ReviewPrepareResponse",
        ["403", "404", "409"],
      ],
      [
        "/submissions/{submission_id}/review/retry",
        "ReviewRetryRequest",
        "ReviewPrepareResponse",
        ["403", "404", "409"],
      ],
      [
        "/submissions/{submission_id}/review/cancel",
        "ReviewCancelRequest",
        "ReviewCancelResponse",
        ["403", "404", "409", "410"],
      ],
      [
        "/internal/v1/reviews/{session_id}/approvals",
        "ReviewApprovalRequest",
        "ReviewApprovalResponse",
        ["404", "409"],
      ],
    ];
    for (const [path, request, response, refusals] of routes) {
      const operation = doc.paths[path]?.post;
      expect(operation, path).toBeDefined();
      const json = (content?: Record<string, { schema: { title?: string } }>) =>
        content?.["application/json"]?.schema.title;
      expect(json(operation!.requestBody?.content), path).toBe(request ?? undefined);
      expect(json(operation!.responses["200"]?.content), path).toBe(response);
      expect(operation!.responses["422"]?.content?.["application/json"]?.schema, path).toEqual({
        $ref: "#/components/schemas/HTTPValidationError",
      });
      for (const status of refusals)
        expect(operation!.responses[status], `${path} ${status}`).toBeDefined();
    }
  });
});
