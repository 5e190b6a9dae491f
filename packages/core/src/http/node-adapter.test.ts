import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "./app.js";
import { type RunningServer, serve } from "./node-adapter.js";
import { sseResponse } from "./sse.js";

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close(100);
  running = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("node adapter", () => {
  it("streams a response: the first chunk arrives before the handler has finished", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    running = await serve(() => {
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode("first;"));
          await released;
          controller.enqueue(new TextEncoder().encode("second"));
          controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/plain" } });
    });
    const res = await fetch(running.url);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("first;");
    release();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("second");
  });

  it("streams a request body to the handler and passes the raw target", async () => {
    const app = createApp({ name: "echo", version: "0" });
    app.route({
      method: "POST",
      path: "/echo/*",
      body: "stream",
      handler: async ({ request, env }) => ({
        text: await request.text(),
        raw: env.rawTarget,
        peer: env.remoteAddress,
      }),
    });
    running = await serve(app.fetch);
    const result = await new Promise<string>((resolve, reject) => {
      // A raw path option: a URL string would be normalised by the client before sending.
      const target = {
        host: "127.0.0.1",
        port: running!.port,
        path: "/echo/a//b/%2e%2e/c?x=1",
        method: "POST",
      };
      const req = httpRequest(target, (res) => {
        let data = "";
        res.on("data", (chunk) => {
          data += chunk;
        });
        res.on("end", () => resolve(data));
      });
      req.on("error", reject);
      req.write("part-1;");
      setTimeout(() => req.end("part-2"), 20);
    });
    const body = JSON.parse(result);
    expect(body.text).toBe("part-1;part-2");
    expect(body.raw).toBe("/echo/a//b/%2e%2e/c?x=1");
    expect(body.peer).toMatch(/127\.0\.0\.1/);
  });

  it("passes multiple Set-Cookie headers and status text through", async () => {
    running = await serve(() => {
      const headers = new Headers();
      headers.append("set-cookie", "a=1");
      headers.append("set-cookie", "b=2");
      return new Response("created", { status: 201, headers });
    });
    const res = await fetch(running.url);
    expect(res.status).toBe(201);
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
  });

  it("streams server-sent events with resume and stops the source on disconnect", async () => {
    let stopped = false;
    running = await serve((request) =>
      sseResponse(
        request,
        async function* ({ lastEventId, signal }) {
          let id = Number(lastEventId ?? 0);
          try {
            while (!signal.aborted) {
              id += 1;
              yield { id: String(id), event: "tick", data: { n: id } };
              await sleep(10);
            }
          } finally {
            stopped = true;
          }
        },
        { heartbeatMs: 5 },
      ),
    );
    const controller = new AbortController();
    const res = await fetch(running.url, {
      headers: { "last-event-id": "41" },
      signal: controller.signal,
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("id: 43")) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain(": connected\n\n");
    expect(text).toContain('id: 42\nevent: tick\ndata: {"n":42}\n\n');
    controller.abort();
    for (let i = 0; i < 50 && !stopped; i++) await sleep(10);
    expect(stopped).toBe(true);
  });

  it("answers 500 with no internals when a plain handler throws", async () => {
    running = await serve(
      () => {
        throw new Error("secret internals");
      },
      {
        log: {
          debug() {},
          info() {},
          warn() {},
          error() {},
          child() {
            return this;
          },
        },
      },
    );
    const res = await fetch(running.url);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("secret");
  });
});

describe("node adapter: a node handler in front of the kit", () => {
  it("answers what the node handler takes and leaves everything else to the fetch handler, untouched", async () => {
    const seenByKit: string[] = [];
    running = await serve(
      async (request, env) => {
        seenByKit.push(`${request.method} ${env.rawTarget} ${await request.text()}`);
        return new Response("kit");
      },
      {
        nodeHandler: (req, res) => {
          if (!req.url?.startsWith("/fast/")) return false;
          res.writeHead(200, { "content-type": "text/plain" });
          req.pipe(res); // the request body is the handler's to read
          return true;
        },
      },
    );
    const fast = await fetch(`${running.url}/fast/x`, { method: "POST", body: "echoed" });
    expect([fast.status, await fast.text()]).toEqual([200, "echoed"]);
    const slow = await fetch(`${running.url}/slow/x?q=1`, { method: "POST", body: "body" });
    expect(await slow.text()).toBe("kit");
    // The kit got the declined request as sent, body included; never the taken one.
    expect(seenByKit).toEqual(["POST /slow/x?q=1 body"]);
  });

  it("answers 500 and keeps serving when the node handler throws", async () => {
    let calls = 0;
    const errors: string[] = [];
    running = await serve(() => new Response("kit"), {
      nodeHandler: () => {
        calls += 1;
        if (calls === 1) throw new Error("secret internals");
        return false;
      },
      log: {
        debug() {},
        info() {},
        warn() {},
        error(message: string) {
          errors.push(message);
        },
        child() {
          return this;
        },
      },
    });
    const failed = await fetch(running.url);
    expect(failed.status).toBe(500);
    expect(await failed.text()).not.toContain("secret");
    expect(errors).toEqual(["node handler failed"]);
    expect(await (await fetch(running.url)).text()).toBe("kit");
  });

  it("never offers a refused method (TRACE) to the node handler", async () => {
    let offered = 0;
    running = await serve(() => new Response("kit"), {
      nodeHandler: () => {
        offered += 1;
        return false;
      },
    });
    const res = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: "127.0.0.1", port: running!.port, path: "/", method: "TRACE" },
        (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect([res, offered]).toEqual([405, 0]);
  });
});

describe("node adapter: refused request bodies", () => {
  it("survives a 413 on a streamed body and closes that connection, then serves the next one", async () => {
    const app = createApp({ name: "limits", version: "0", bodyLimit: 1024 });
    app.route({
      method: "POST",
      path: "/upload",
      body: "raw",
      contentTypes: ["application/zip"],
      handler: ({ body }) => ({ n: body.byteLength }),
    });
    running = await serve(app.fetch);
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      const reply = await new Promise<{ status: number; connection: string | undefined }>(
        (resolve, reject) => {
          const req = httpRequest(
            {
              host: "127.0.0.1",
              port: running!.port,
              path: "/upload",
              method: "POST",
              headers: { "content-type": "application/zip" },
            },
            (res) => {
              res.resume();
              resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
            },
          );
          req.on("error", () => {});
          // Chunked, no Content-Length: the limit is found while streaming.
          for (let i = 0; i < 64; i++) req.write(Buffer.alloc(1024, 1));
          req.end();
          req.on("error", reject);
        },
      );
      expect(reply).toEqual({ status: 413, connection: "close" });
      await sleep(50);
      const next = await fetch(`${running.url}/upload`, {
        method: "POST",
        headers: { "content-type": "application/zip" },
        body: new Uint8Array(10),
      });
      expect(await next.json()).toEqual({ n: 10 });
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("closes the connection when a handler answers without reading the body", async () => {
    running = await serve(() => new Response("refused", { status: 401 }));
    const res = await fetch(running.url, { method: "POST", body: "x".repeat(100_000) });
    expect(res.status).toBe(401);
    expect(res.headers.get("connection")).toBe("close");
  });
});
