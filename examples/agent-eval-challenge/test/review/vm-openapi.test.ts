// The review VM's routes and review/deployed in /openapi.json: each declares its records under
// a name (the spec's ReviewDeployedRequest; the others named here), its 422
// HTTPValidationError, and every refusal it can answer with its stable code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";

type Content = Record<string, { schema: { title?: string; $ref?: string } }>;
interface Operation {
  requestBody?: { content: Content };
  responses: Record<string, { description?: string; content?: Content }>;
}

describe("review VM routes in the OpenAPI document", () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval("pglite");
  });
  afterAll(() => t?.close());

  it("declares each route's records, its 422 and its refusals with their codes", async () => {
    const doc = (await (await t.fetch("/openapi.json")).json()) as {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, Record<"get" | "post", Operation>>;
    };
    for (const name of [
      "ReviewDeployedRequest",
      "ReviewDeployedResponse",
      "ReviewAssignmentResponse",
      "RulesBundleResponse",
      "ReviewModelCallRequest",
      "ReviewModelCallResponse",
      "ReviewFailureRequest",
      "ReviewFailureResponse",
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    const base = "/review/v1/assignments/{assignment_id}";
    const routes: [string, "get" | "post", string | null, string | null, Record<string, string>][] =
      [
        [
          "/submissions/{submission_id}/review/deployed",
          "post",
          "ReviewDeployedRequest",
          "ReviewDeployedResponse",
          {
            "403": "not_submission_owner",
            "404": "assignment_not_found",
            "409": "deployment_conflict",
          },
        ],
        [base, "get", null, "ReviewAssignmentResponse", { "401": "invalid_token" }],
        [`${base}/rules`, "get", null, "RulesBundleResponse", { "401": "invalid_token" }],
        [
          `${base}/artifact`,
          "get",
          null,
          null,
          { "401": "invalid_token", "500": "artifact_integrity_failure" },
        ],
        [
          `${base}/model-call-started`,
          "post",
          "ReviewModelCallRequest",
          "ReviewModelCallResponse",
          { "401": "invalid_token", "409": "model_call_conflict", "410": "capability_revoked" },
        ],
        [
          `${base}/failure`,
          "post",
          "ReviewFailureRequest",
          "ReviewFailureResponse",
          { "401": "invalid_token", "409": "invalid_transition", "410": "capability_revoked" },
        ],
      ];
    const title = (content?: Content) => content?.["application/json"]?.schema.title;
    for (const [path, method, request, response, refusals] of routes) {
      const operation = doc.paths[path]?.[method];
      expect(operation, path).toBeDefined();
      expect(title(operation!.requestBody?.content), path).toBe(request ?? undefined);
      if (response) expect(title(operation!.responses["200"]?.content), path).toBe(response);
      expect(operation!.responses["422"]?.content?.["application/json"]?.schema, path).toEqual({
        $ref: "#/components/schemas/HTTPValidationError",
      });
      for (const [status, code] of Object.entries(refusals)) {
        expect(operation!.responses[status]?.description, `${path} ${status}`).toContain(code);
      }
    }
    expect(Object.keys(doc.paths[`${base}/artifact`]!.get.responses["200"]!.content ?? {})).toEqual(
      ["application/zip"],
    );
  });
});
