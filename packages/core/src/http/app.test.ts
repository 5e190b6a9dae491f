import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { createApp, json } from "./app.js";
import { HttpError } from "./http-error.js";
import { createLogger } from "./logger.js";

function testApp() {
  const lines: string[] = [];
  const app = createApp({
    name: "test-app",
    version: "1.2.3",
    bodyLimit: 64,
    logger: createLogger({ name: "test", write: (line) => lines.push(line) }),
  });
  app.route({
    method: "POST",
    path: "/items/:id",
    params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
    query: Type.Object({
      verbose: Type.Optional(Type.Boolean()),
      tag: Type.Optional(Type.Array(Type.String())),
    }),
    body: Type.Object({
      name: Type.String({ minLength: 1 }),
      count: Type.Optional(Type.Integer({ default: 1 })),
    }),
    responses: { 201: { description: "Created", schema: Type.Object({ id: Type.Integer() }) } },
    handler: ({ params, query, body }) => json({ id: params.id, query, body }, { status: 201 }),
  });
  app.route({
    method: "POST",
    path: "/upload",
    body: "raw",
    contentTypes: ["application/zip"],
    handler: ({ body }) => ({ bytes: body.byteLength }),
  });
  app.route({
    method: "GET",
    path: "/teapot",
    handler: () => {
      throw new HttpError(418, "teapot", "I am a teapot", { headers: { "retry-after": "3" } });
    },
  });
  app.route({
    method: "GET",
    path: "/boom",
    handler: () => {
      throw new Error("database password is hunter2");
    },
  });
  return { app, lines };
}

const post = (
  path: string,
  body: unknown,
  headers: Record<string, string> = { "content-type": "application/json" },
) =>
  new Request(`http://local${path}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("createApp", () => {
  it("validates params, query and body, converts strings and fills defaults", async () => {
    const { app } = testApp();
    const res = await app.fetch(post("/items/7?verbose=true&tag=a&tag=b", { name: "x" }));
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      id: 7,
      query: { verbose: true, tag: ["a", "b"] },
      body: { name: "x", count: 1 },
    });
  });

  it("answers 422 in FastAPI's exact HTTPValidationError shape", async () => {
    const { app } = testApp();
    const res = await app.fetch(post("/items/7", { count: "many" }));
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(["detail"]);
    expect(body.detail).toEqual(
      expect.arrayContaining([
        { loc: ["body", "name"], msg: "Field required", type: "missing" },
        expect.objectContaining({ loc: ["body", "count"], type: "int_type" }),
      ]),
    );
    for (const issue of body.detail)
      expect(Object.keys(issue).sort()).toEqual(["loc", "msg", "type"]);
  });

  it("reports path and query failures with their location", async () => {
    const { app } = testApp();
    const res = await app.fetch(post("/items/0?verbose=perhaps", { name: "x" }));
    expect(res.status).toBe(422);
    const locs = (await res.json()).detail.map((issue: { loc: unknown[] }) => issue.loc);
    expect(locs).toEqual(
      expect.arrayContaining([
        ["path", "id"],
        ["query", "verbose"],
      ]),
    );
  });

  it("answers 422 json_invalid for malformed JSON and missing for an empty body", async () => {
    const { app } = testApp();
    const bad = await app.fetch(post("/items/1", "{not json"));
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
    const empty = await app.fetch(post("/items/1", ""));
    expect((await empty.json()).detail[0]).toEqual({
      loc: ["body"],
      msg: "Field required",
      type: "missing",
    });
  });

  it("answers 415 when a JSON route gets another media type", async () => {
    const { app } = testApp();
    const res = await app.fetch(post("/items/1", '{"name":"x"}', { "content-type": "text/plain" }));
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ code: "unsupported_media_type" });
  });

  it("accepts a raw body of an allowed type and refuses others", async () => {
    const { app } = testApp();
    const ok = await app.fetch(
      post("/upload", "PK\u0003\u0004", { "content-type": "application/zip" }),
    );
    expect(await ok.json()).toEqual({ bytes: 4 });
    const refused = await app.fetch(post("/upload", "x", { "content-type": "application/json" }));
    expect(refused.status).toBe(415);
  });

  it("answers 413 past the body limit, declared or streamed", async () => {
    const { app } = testApp();
    const declared = await app.fetch(
      post("/upload", "x".repeat(65), { "content-type": "application/zip" }),
    );
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ code: "payload_too_large", limit_bytes: 64 });
    // A chunked body with no Content-Length is counted as it streams.
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode("0123456789"));
        controller.close();
      },
    });
    const streamed = await app.fetch(
      new Request("http://local/upload", {
        method: "POST",
        headers: { "content-type": "application/zip" },
        body: chunks,
        duplex: "half",
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
  });

  it("renders HttpError with its status, code and headers", async () => {
    const { app } = testApp();
    const res = await app.fetch(new Request("http://local/teapot"));
    expect(res.status).toBe(418);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(await res.json()).toEqual({ detail: "I am a teapot", code: "teapot" });
  });

  it("answers 500 without internals and logs the error redacted", async () => {
    const { app, lines } = testApp();
    const res = await app.fetch(
      new Request("http://local/boom", { headers: { "x-request-id": "req-42" } }),
    );
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("hunter2");
    expect(JSON.parse(text)).toEqual({
      detail: "Internal Server Error",
      code: "internal_error",
      request_id: "req-42",
    });
    expect(lines.some((line) => line.includes("req-42"))).toBe(true);
  });

  it("answers 404 with a code for unknown routes and echoes a request id", async () => {
    const { app } = testApp();
    const res = await app.fetch(new Request("http://local/nowhere"));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "Not Found", code: "not_found" });
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const injected = await app.fetch(
      new Request("http://local/nowhere", { headers: { "x-request-id": 'a b {"json": 1}' } }),
    );
    expect(injected.headers.get("x-request-id")).not.toContain(" ");
  });

  it("serves an OpenAPI 3.1 document generated from the route schemas", async () => {
    const { app } = testApp();
    const res = await app.fetch(new Request("http://local/openapi.json"));
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toEqual({ title: "test-app", version: "1.2.3" });
    const op = doc.paths["/items/{id}"].post;
    expect(op.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "id", in: "path", required: true })]),
    );
    expect(op.requestBody.content["application/json"].schema.required).toEqual(["name"]);
    expect(op.responses["422"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/HTTPValidationError",
    );
    expect(doc.paths["/upload"].post.requestBody.content["application/zip"]).toBeDefined();
    expect(doc.paths["/openapi.json"]).toBeUndefined();
  });

  it("answers HEAD from the GET route, handing it the request as sent", async () => {
    const { app } = testApp();
    app.route({
      method: "GET",
      path: "/method",
      handler: ({ request }) => ({ method: request.method }),
    });
    const head = await app.fetch(new Request("http://local/method", { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(await head.json()).toEqual({ method: "HEAD" });
  });

  it("answers HEAD for openapi.json", async () => {
    const { app } = testApp();
    const res = await app.fetch(new Request("http://local/openapi.json", { method: "HEAD" }));
    expect(res.status).toBe(200);
  });
});

describe("before hooks", () => {
  it("run before validation and before the body is read, so a refused caller learns nothing", async () => {
    const app = createApp({
      name: "hooks",
      version: "0",
      logger: createLogger({ name: "t", level: "silent" }),
    });
    let bodyRead = false;
    app.route({
      method: "POST",
      path: "/guarded/:id",
      params: Type.Object({ id: Type.Integer() }),
      body: Type.Object({ name: Type.String() }),
      before: [
        ({ request }) => {
          if (request.headers.get("x-key") !== "ok") throw new HttpError(401, "unauthorized", "no");
        },
      ],
      handler: ({ params }) => ({ id: params.id }),
    });
    // highWaterMark 0: the stream is pulled only when someone really reads the body.
    const body = new ReadableStream(
      {
        pull(controller) {
          bodyRead = true;
          controller.enqueue(new TextEncoder().encode("{}"));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const refused = await app.fetch(
      new Request("http://local/guarded/not-a-number", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit),
    );
    expect(refused.status).toBe(401);
    expect(bodyRead).toBe(false);
    const allowed = await app.fetch(
      new Request("http://local/guarded/not-a-number", {
        method: "POST",
        headers: { "content-type": "application/json", "x-key": "ok" },
        body: "{}",
      }),
    );
    expect(allowed.status).toBe(422);
  });
});
