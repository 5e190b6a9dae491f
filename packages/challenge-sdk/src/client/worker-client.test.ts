// The worker client against a real HTTP server on a real socket: each test scripts what the
// server answers (503 + Retry-After, 429, 5xx, a definitive 4xx, a slow answer, a dropped
// connection) and checks what the client sent, how often, and when it stopped.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  verifySignedRequest,
} from "@platform/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createWorkerClient } from "./worker-client.js";
import { WorkerClientError } from "./worker-client-error.js";

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
  at: number;
}
type Reply = (response: ServerResponse, request: IncomingMessage) => void;

const TOKEN = "run-42.s3cr3t-token-value-that-must-never-leak";

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (response) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };
const hang: Reply = () => {};
const drop: Reply = (_, request) => request.socket.destroy();

let server: Server;
let baseUrl: string;
let received: Received[];
let script: Reply[];
/** What the server answers once the script is used up. */
let fallback: Reply;

beforeAll(async () => {
  await initCrypto();
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      });
      (script.shift() ?? fallback)(response, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/runs/42`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  received = [];
  script = [];
  fallback = json(200, { ok: true });
});

const client = (timeoutMs = 5_000) =>
  createWorkerClient({ baseUrl: `${baseUrl}/`, auth: { bearer: TOKEN }, timeoutMs });
/** Fast backoff so the retry tests take milliseconds, not seconds. */
const quick = { initialDelayMs: 20, maxDelayMs: 40 };

async function failure(promise: Promise<unknown>): Promise<WorkerClientError> {
  const error = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(WorkerClientError);
  return error as WorkerClientError;
}

describe("one request", () => {
  it("sends JSON with the bearer under the base URL and reads a JSON answer", async () => {
    fallback = json(201, { id: 7 });
    const answer = await client().send<{ id: number }>("POST", "/attempts", {
      json: { task_id: "t1" },
      headers: { "x-telemetry-session": "s1" },
    });
    expect(answer).toMatchObject({ status: 201, ok: true, body: { id: 7 }, code: null });
    const [request] = received;
    expect(request!.url).toBe("/runs/42/attempts");
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["x-telemetry-session"]).toBe("s1");
    expect(JSON.parse(request!.body.toString())).toEqual({ task_id: "t1" });
  });

  it("returns a refusal with its status, code and message, without retrying it", async () => {
    fallback = json(409, { detail: "a different result was received", code: "result_conflict" });
    const answer = await client().send("POST", "/result", { body: "{}" });
    expect(answer).toMatchObject({
      status: 409,
      ok: false,
      code: "result_conflict",
      detail: "a different result was received",
    });
    expect(received).toHaveLength(1);
  });

  it("sendJson returns a 2xx body and throws a refusal", async () => {
    fallback = json(200, { env: { A: "1" } });
    expect(await client().sendJson("GET", "/env")).toEqual({ env: { A: "1" } });
    fallback = json(404, { detail: "no such run", code: "run_not_found" });
    const error = await failure(client().sendJson("GET", ""));
    expect(error).toMatchObject({ kind: "refused", status: 404, code: "run_not_found" });
    expect(error.message).toBe("GET / answered 404 run_not_found: no such run");
  });

  it("reads bytes that are not JSON as bytes, with a null body", async () => {
    const zip = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0x00]);
    fallback = (response) => {
      response.writeHead(200, { "content-type": "application/zip" });
      response.end(zip);
    };
    const answer = await client().send("GET", "/artifact");
    expect(answer.body).toBeNull();
    expect(Buffer.compare(answer.bytes, zip)).toBe(0);
  });

  it("throws no_answer on a dropped connection and timeout on a slow one", async () => {
    fallback = drop;
    expect(await failure(client().send("GET", "/env"))).toMatchObject({ kind: "no_answer" });
    fallback = hang;
    const started = Date.now();
    const slow = await failure(client(200).send("GET", "/env"));
    expect(slow).toMatchObject({ kind: "timeout", status: null });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("never puts its token in an error, even when the server echoes it", async () => {
    fallback = json(401, { detail: `unknown token ${TOKEN}`, code: "invalid_token" });
    const error = await failure(client().sendJson("GET", "/env"));
    expect(error.message).not.toContain(TOKEN);
    expect(error.detail).toBe("unknown token [redacted]");
    expect(JSON.stringify(error)).not.toContain(TOKEN);
  });

  it("refuses a path that would leave the base URL", async () => {
    await expect(client().send("GET", "http://elsewhere.invalid/")).rejects.toThrow(TypeError);
    expect(received).toHaveLength(0);
  });

  it("does not follow a redirect (its credential stays with the address it was given)", async () => {
    fallback = (response) => {
      response.writeHead(307, { location: "http://elsewhere.invalid/" });
      response.end();
    };
    expect((await client().send("GET", "/env")).status).toBe(307);
    const error = await failure(client().deliver("POST", "/result", "{}", quick));
    expect(error).toMatchObject({ kind: "refused", status: 307 });
  });
});

describe("deliver: these exact bytes until a 2xx, a definitive refusal or the deadline", () => {
  // Not canonical JSON on purpose: the bytes, not a re-serialisation, are what is retried.
  const bytes = '{"b": 1,  "a":"é"}';

  it("retries 503, 429, 500, 502, 408, 425 and a dropped connection, with the identical bytes", async () => {
    script = [
      json(503, { code: "verifier_unavailable" }),
      json(429, { code: "rate_limited" }),
      json(500, {}),
      json(502, {}),
      json(408, {}),
      json(425, {}),
      drop,
    ];
    fallback = json(202, { state: "verifying" });
    const retries: string[] = [];
    const answer = await client().deliver<{ state: string }>("POST", "/result", bytes, {
      ...quick,
      onRetry: (retry) => retries.push(retry.reason),
    });
    expect(answer).toMatchObject({ status: 202, body: { state: "verifying" } });
    expect(received).toHaveLength(8);
    for (const request of received) {
      expect(request.body.toString("utf8")).toBe(bytes);
      expect(request.headers["content-type"]).toBe("application/json");
    }
    expect(retries[0]).toBe("POST /result answered 503 verifier_unavailable");
    expect(retries[6]).toMatch(/^POST \/result: no answer/);
  });

  it("waits what Retry-After asks, in seconds", async () => {
    script = [json(503, {}, { "retry-after": "1" })];
    await client().deliver("POST", "/result", bytes, quick);
    expect(received).toHaveLength(2);
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it("waits what Retry-After asks, as an HTTP date", async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000);
    script = [json(503, {}, { "retry-after": at.toUTCString() })];
    await client().deliver("POST", "/result", bytes, quick);
    expect(received).toHaveLength(2);
    expect(received[1]!.at).toBeGreaterThanOrEqual(at.getTime() - 50);
  });

  it("stops at once on a definitive 4xx, with its status, code and message", async () => {
    for (const status of [400, 401, 403, 404, 409, 410, 413, 422]) {
      received = [];
      script = [json(status, { detail: "no", code: `code_${status}` })];
      const error = await failure(client().deliver("POST", "/result", bytes, quick));
      expect(error).toMatchObject({
        kind: "refused",
        status,
        code: `code_${status}`,
        detail: "no",
      });
      expect(received).toHaveLength(1);
    }
  });

  it("gives up at the deadline, naming the last answer", async () => {
    fallback = json(503, { code: "verifier_unavailable" });
    const started = Date.now();
    const error = await failure(
      client().deliver("POST", "/result", bytes, { ...quick, budgetMs: 400 }),
    );
    // At the budget, not at an attempt's own 30 s timeout.
    expect(Date.now() - started).toBeLessThan(30_000 / 4);
    expect(error).toMatchObject({ kind: "deadline", status: 503 });
    expect(error.message).toMatch(
      /^POST \/result: no 2xx within 0 s \(last: POST \/result answered 503 verifier_unavailable\)$/,
    );
    expect(received.length).toBeGreaterThan(2);
  });

  it("cuts a slow attempt at the deadline (the per-attempt timeout is longer)", async () => {
    fallback = hang;
    const started = Date.now();
    const error = await failure(
      client(30_000).deliver("POST", "/result", bytes, { ...quick, budgetMs: 300 }),
    );
    // Cut at the budget, not at the attempt's own 30 s timeout.
    expect(Date.now() - started).toBeLessThan(30_000 / 4);
    expect(error).toMatchObject({ kind: "deadline", status: null });
    expect(error.message).toMatch(/no answer within 0\.3 s/);
  });

  it("names the last answer when the budget cuts the next attempt short", async () => {
    script = [json(503, { code: "verifier_unavailable" })];
    fallback = hang;
    const error = await failure(
      client(30_000).deliver("POST", "/result", bytes, { ...quick, budgetMs: 500 }),
    );
    expect(error).toMatchObject({ kind: "deadline", status: 503 });
    expect(error.message).toMatch(/\(last: POST \/result answered 503 verifier_unavailable\)$/);
    expect(received).toHaveLength(2);
  });

  it("retries an attempt that timed out, and takes the next answer", async () => {
    script = [hang];
    const answer = await client(200).deliver("POST", "/result", bytes, quick);
    expect(answer.status).toBe(200);
    expect(received).toHaveLength(2);
  });

  it("gives up at once when Retry-After asks for a wait past the deadline", async () => {
    fallback = json(503, {}, { "retry-after": "3600" });
    const started = Date.now();
    const error = await failure(
      client().deliver("POST", "/result", bytes, { ...quick, budgetMs: 10_000 }),
    );
    expect(error).toMatchObject({ kind: "deadline", status: 503 });
    // At once: neither the hour asked for nor the 10 s budget was waited.
    expect(Date.now() - started).toBeLessThan(10_000 / 2);
    expect(received).toHaveLength(1);
  });

  it("stops waiting when the caller aborts", async () => {
    fallback = json(503, {}, { "retry-after": "5" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await failure(
      client().deliver("POST", "/result", bytes, { signal: controller.signal }),
    );
    expect(error).toMatchObject({ kind: "aborted" });
    expect(received).toHaveLength(1);
  });
});

describe("signed requests", () => {
  const pair = () => keypairFromMnemonic(generateMnemonic());

  it("sign each attempt's exact bytes with a fresh nonce, each verifying", async () => {
    const signer = pair();
    const signed = createWorkerClient({
      baseUrl: `${baseUrl}/challenges/agent-eval`,
      auth: { signer, slug: "agent-eval" },
    });
    script = [json(503, {}), json(500, {})];
    const body = '{"name":"agent","n":1}';
    await signed.deliver("POST", "/submissions?b=2&a=1", body, quick);
    expect(received).toHaveLength(3);
    const nonces = new Set(received.map((request) => request.headers["x-nonce"]));
    expect(nonces.size).toBe(3);
    for (const request of received) {
      expect(request.body.toString()).toBe(body);
      const check = verifySignedRequest({
        headers: request.headers,
        method: request.method,
        pathWithQuery: request.url,
        body: request.body,
        slug: "agent-eval",
      });
      expect(check).toMatchObject({ ok: true, hotkey: signer.address });
      expect(request.headers.authorization).toBeUndefined();
    }
  });

  it("sign a GET with no body, and a master route with no slug", async () => {
    const signer = pair();
    await createWorkerClient({ baseUrl, auth: { signer } }).send("GET", "/status?limit=16");
    const [request] = received;
    expect(request!.headers["content-type"]).toBeUndefined();
    const check = verifySignedRequest({
      headers: request!.headers,
      method: "GET",
      pathWithQuery: request!.url,
    });
    expect(check.ok).toBe(true);
  });
});
