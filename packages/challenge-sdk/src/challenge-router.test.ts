import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { type ChallengeRouter, createRouter, type RegisteredRoute } from "./challenge-router.js";

function router(reserved: string[] = []): { r: ChallengeRouter; routes: RegisteredRoute[] } {
  const routes: RegisteredRoute[] = [];
  return { r: createRouter(routes, reserved), routes };
}
const handler = () => undefined;

describe("createRouter", () => {
  it("records each kind with its methods", () => {
    const { r, routes } = router();
    r.public({ method: "GET", path: "/v1/a", handler })
      .signed({ method: ["POST", "PUT"], path: "/v1/b", body: Type.Object({}), handler })
      .bridge({ method: "POST", path: "/internal/v1/bridge/submissions", handler })
      .internal({ method: "POST", path: "/internal/v1/worker/process-next", handler });
    expect(routes.map((x) => [x.access, x.methods, x.path])).toEqual([
      ["public", ["GET"], "/v1/a"],
      ["signed", ["POST", "PUT"], "/v1/b"],
      ["bridge", ["POST"], "/internal/v1/bridge/submissions"],
      ["internal", ["POST"], "/internal/v1/worker/process-next"],
    ]);
  });

  it("refuses a public or signed route the proxy would never forward", () => {
    const { r } = router();
    expect(() => r.public({ method: "GET", path: "/internal/v1/x", handler })).toThrow(
      /router.internal/,
    );
    expect(() => r.signed({ method: "POST", path: "/internal", handler })).toThrow(/\/internal/);
    expect(() => r.public({ method: "GET", path: "/health/deep", handler })).toThrow(
      /blocks this path/,
    );
    expect(() => r.public({ method: "GET", path: "/version", handler })).toThrow(
      /blocks this path/,
    );
    expect(() => r.signed({ method: "POST", path: "/v1/benchmarks/:id/run", handler })).toThrow(
      /blocks/,
    );
  });

  it("refuses an internal or bridge route outside /internal", () => {
    const { r } = router();
    expect(() => r.internal({ method: "POST", path: "/v1/worker", handler })).toThrow(
      /under \/internal/,
    );
    expect(() => r.bridge({ method: "POST", path: "/bridge/submissions", handler })).toThrow(
      /under \/internal/,
    );
    expect(() => r.internal({ method: "POST", path: "/internals/x", handler })).toThrow(
      /under \/internal/,
    );
  });

  it("refuses a duplicate METHOD path, and the SDK's reserved routes", () => {
    const { r } = router(["GET /health", "GET /openapi.json"]);
    r.public({ method: "GET", path: "/v1/a", handler });
    expect(() => r.signed({ method: ["POST", "GET"], path: "/v1/a", handler })).toThrow(
      /already registered/,
    );
    expect(() => r.public({ method: "GET", path: "/openapi.json", handler })).toThrow(
      /already registered/,
    );
    r.public({ method: "POST", path: "/v1/x", handler });
  });

  it("refuses malformed paths, options and handlers", () => {
    const { r } = router();
    expect(() => r.public({ method: "GET", path: "v1/a", handler })).toThrow(/starts with \//);
    expect(() => r.public({ method: "GET", path: "/v1/a?x=1", handler })).toThrow(/no query/);
    expect(() => r.public({ method: [], path: "/v1/a", handler })).toThrow(/at least one method/);
    expect(() => r.public({ method: "GET", path: "/v1/a", bodyLimit: -1, handler })).toThrow(
      /bodyLimit/,
    );
    expect(() =>
      r.public({ method: "GET", path: "/v1/a", body: "json" as never, handler }),
    ).toThrow(/body/);
    expect(() => r.public({ method: "GET", path: "/v1/a" } as never)).toThrow(/handler/);
    expect(() =>
      r.signed({
        method: "POST",
        path: "/v1/b",
        rateLimit: { limit: 0, windowSeconds: 60 },
        handler,
      }),
    ).toThrow(/limit/);
    expect(() =>
      r.signed({
        method: "POST",
        path: "/v1/b",
        rateLimit: { limit: 1, windowSeconds: 0 },
        handler,
      }),
    ).toThrow(/windowSeconds/);
  });

  it("registers a submission as a signed route and a bridge route sharing one bucket", () => {
    const { r, routes } = router();
    r.submission({
      path: "/v1/submissions",
      body: Type.Object({}),
      raw: ["application/zip"],
      rateLimit: { limit: 2, windowSeconds: 60 },
      handler,
    });
    r.submission({
      method: "PUT",
      path: "/v1/bundles",
      bridgePath: "/internal/v1/bridge/bundles",
      raw: ["application/zip"],
      rateLimit: { limit: 1, windowSeconds: 60, bucket: "bundles" },
      handler,
    });
    expect(routes.map((x) => [x.access, x.methods, x.path, x.rateLimit?.bucket])).toEqual([
      ["signed", ["POST"], "/v1/submissions", "POST /v1/submissions"],
      ["bridge", ["POST"], "/internal/v1/bridge/submissions", "POST /v1/submissions"],
      ["signed", ["PUT"], "/v1/bundles", "bundles"],
      ["bridge", ["PUT"], "/internal/v1/bridge/bundles", "bundles"],
    ]);
    expect(routes.every((x) => x.submission !== undefined)).toBe(true);
    // Both paths are taken: neither can be registered again, by any kind.
    expect(() =>
      r.bridge({ method: "POST", path: "/internal/v1/bridge/submissions", handler }),
    ).toThrow(/already registered/);
    expect(() => r.signed({ method: "POST", path: "/v1/submissions", handler })).toThrow(
      /already registered/,
    );
  });

  it("refuses a submission that could not work as declared", () => {
    const { r } = router();
    const body = Type.Object({});
    expect(() => r.submission({ path: "/v1/s", handler })).toThrow(/body.*raw/);
    expect(() => r.submission({ path: "/internal/v1/s", body, handler })).toThrow(/\/internal/);
    expect(() => r.submission({ path: "/v1/s", bridgePath: "/v1/bridge", body, handler })).toThrow(
      /under \/internal/,
    );
    expect(() => r.submission({ path: "/v1/s", raw: ["application/json"], body, handler })).toThrow(
      /application\/json/,
    );
    expect(() => r.submission({ path: "/v1/s", raw: ["Application/ZIP"], handler })).toThrow(
      /lower-case media types/,
    );
    expect(() => r.submission({ path: "/v1/s", method: "GET" as never, body, handler })).toThrow(
      /POST or PUT/,
    );
    expect(() => r.submission({ path: "/v1/s", body: "raw" as never, handler })).toThrow(/raw/);
    expect(() =>
      r.submission({ path: "/v1/s", body, contentTypes: ["a/b"], handler } as never),
    ).toThrow(/raw/);
  });

  it("takes a bearer check on public and internal routes only", () => {
    const { r } = router();
    const bearer = () => true;
    r.public({ method: "GET", path: "/v1/run", bearer, handler });
    r.internal({ method: "GET", path: "/internal/v1/run", bearer, handler });
    expect(() => r.signed({ method: "GET", path: "/v1/x", bearer, handler } as never)).toThrow(
      /public or internal/,
    );
    expect(() =>
      r.public({ method: "GET", path: "/v1/y", bearer: "token" as never, handler }),
    ).toThrow(/bearer must be a function/);
  });

  it("takes a bearerRefusal only beside a bearer, with a snake_case code", () => {
    const { r } = router();
    const bearer = () => true;
    r.public({
      method: "GET",
      path: "/v1/run",
      bearer,
      bearerRefusal: { code: "invalid_session", message: "Unknown session." },
      handler,
    });
    r.internal({ method: "GET", path: "/internal/v1/run", bearer, bearerRefusal: {}, handler });
    const refusal =
      (bearerRefusal: unknown, withBearer = true) =>
      () =>
        r.public({
          method: "GET",
          path: `/v1/r${Math.random().toString(36).slice(2)}`,
          ...(withBearer ? { bearer } : {}),
          bearerRefusal: bearerRefusal as never,
          handler,
        });
    expect(refusal({ code: "x" }, false)).toThrow(/beside a bearer/);
    expect(refusal({ code: "Invalid Token" })).toThrow(/snake_case/);
    expect(refusal({ code: 401 })).toThrow(/snake_case/);
    expect(refusal({ message: "x".repeat(201) })).toThrow(/200 characters/);
    expect(refusal({ status: 403 })).toThrow(/code\?, message\?/);
    expect(refusal("invalid_session")).toThrow(/code\?, message\?/);
    expect(() =>
      r.submission({
        path: "/v1/s",
        body: Type.Object({}),
        bearerRefusal: { code: "x" },
        handler,
      } as never),
    ).toThrow(/no bearer/);
  });
});
