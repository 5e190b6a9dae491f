import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { createApp } from "./app.js";
import { MAX_JSON_DEPTH, parseJsonBody } from "./body.js";
import { createLogger } from "./logger.js";
import { ValidationError } from "./validation-error.js";

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const bytes = (text: string) => new TextEncoder().encode(text);

describe("parseJsonBody", () => {
  it("parses a body nested up to the limit", () => {
    expect(() => parseJsonBody(bytes(nested(MAX_JSON_DEPTH)))).not.toThrow();
  });

  it("refuses a body nested past the limit as a 422 issue, never a stack overflow", () => {
    expect(() => parseJsonBody(bytes(nested(MAX_JSON_DEPTH + 1)))).toThrow(ValidationError);
  });
});

describe("a JSON route given deeply nested JSON", () => {
  // Found by the OpenAPI fuzz suite: validation cloned the value recursively and overflowed.
  it("answers 422 json_invalid, not 500", async () => {
    const app = createApp({
      name: "t",
      version: "1",
      logger: createLogger({ name: "t", level: "silent" }),
    });
    app.route({
      method: "POST",
      path: "/items",
      body: Type.Object({ name: Type.String() }),
      handler: ({ body }) => body,
    });
    const response = await app.fetch(
      new Request("http://t.test/items", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: nested(5_000),
      }),
    );
    expect(response.status).toBe(422);
    const { detail } = (await response.json()) as { detail: { loc: string[]; type: string }[] };
    expect(detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
  });
});
