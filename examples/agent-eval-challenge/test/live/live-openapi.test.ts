// The live routes in /openapi.json: each declares its records under a name, its 422
// HTTPValidationError, and every refusal it can answer with its stable code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";

type Content = Record<string, { schema: { title?: string; $ref?: string } }>;
interface Operation {
  requestBody?: { content: Content };
  responses: Record<string, { description?: string; content?: Content }>;
}

describe("live routes in the OpenAPI document", () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval("pglite");
  });
  afterAll(() => t?.close());

  it("declares each route's records, its 422 and its refusals with their codes", async () => {
    const doc = (await (await t.fetch("/openapi.json")).json()) as {
      paths: Record<string, Record<"get" | "post", Operation>>;
    };
    const routes: [string, "get" | "post", string, string | null, Record<string, string>][] = [
      [
        "/evaluation/v1/runs/{eval_run_id}/attempts",
        "post",
        "201",
        "AttemptOpenResponse",
        {
          "401": "invalid_telemetry_session",
          "409": "unknown_trial",
          "410": "capability_revoked",
        },
      ],
      [
        "/internal/v1/evaluations/{attempt_id}/events",
        "post",
        "202",
        "AttemptEventsReceipt",
        {
          "401": "invalid_internal_token",
          "403": "challenge_slug_mismatch",
          "410": "capability_revoked",
          "413": "too_many_lines",
          "415": "unsupported_media_type",
          "422": "invalid_event_line",
        },
      ],
      ["/v1/execution-pool/live", "get", "200", "LivePoolResponse", {}],
      [
        "/v1/submissions/{submission_id}/live",
        "get",
        "200",
        null,
        { "404": "submission_not_found", "429": "live_feed_busy" },
      ],
    ];
    for (const [path, method, success, record, refusals] of routes) {
      const operation = doc.paths[path]?.[method];
      expect(operation, path).toBeDefined();
      if (record) {
        expect(operation!.responses[success]?.content?.["application/json"]?.schema.title).toBe(
          record,
        );
      }
      expect(operation!.responses["422"]?.content?.["application/json"]?.schema, path).toEqual({
        $ref: "#/components/schemas/HTTPValidationError",
      });
      for (const [status, code] of Object.entries(refusals)) {
        expect(operation!.responses[status]?.description, `${path} ${status}`).toContain(code);
      }
    }
    const events = doc.paths["/internal/v1/evaluations/{attempt_id}/events"]!.post;
    expect(Object.keys(events.requestBody!.content)).toEqual(["application/x-ndjson"]);
    const feed = doc.paths["/v1/submissions/{submission_id}/live"]!.get;
    expect(Object.keys(feed.responses["200"]!.content!)).toEqual(["text/event-stream"]);
  });
});
