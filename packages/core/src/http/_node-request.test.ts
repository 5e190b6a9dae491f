import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningServer, serve } from "./node-adapter.js";

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close(100);
  running = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Send one request with a raw (unnormalised) target; resolves with the answer's body. */
function rawRequest(port: number, path: string, method = "GET", body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method }, (res) => {
      let data = "";
      res.on("data", (chunk) => {
        data += chunk;
      });
      res.on("end", () => resolve(data));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("the request handlers get from the node adapter", () => {
  it("is a Request with the method, the URL as Request parses it, and the headers as sent", async () => {
    running = await serve((request) =>
      Response.json({
        isRequest: request instanceof Request,
        tag: Object.prototype.toString.call(request),
        method: request.method,
        url: request.url,
        custom: request.headers.get("x-custom"),
        body: request.body,
        bodyUsed: request.bodyUsed,
      }),
    );
    const target = "/a//b/%2e%2e/c/./d?x=1&y=%20#frag";
    const seen = JSON.parse(await rawRequest(running.port, target));
    expect(seen).toEqual({
      isRequest: true,
      tag: "[object Request]",
      method: "GET",
      url: new URL(target, running.url).href,
      custom: null,
      body: null,
      bodyUsed: false,
    });
  });

  it("reads a streamed body through text(), and the same request again through new Request()", async () => {
    running = await serve(async (request) => {
      const copy = new Request(request);
      const viaCopy = await copy.text();
      return Response.json({ viaCopy, usedAfter: request.bodyUsed, mode: request.mode });
    });
    const res = await fetch(`${running.url}/p`, { method: "PUT", body: "payload" });
    expect(await res.json()).toEqual({ viaCopy: "payload", usedAfter: true, mode: "cors" });
  });

  it("clones: both copies read the whole body, and used bodies refuse like Request's", async () => {
    running = await serve(async (request) => {
      const clone = request.clone();
      const [a, b] = await Promise.all([request.text(), clone.text()]);
      let refused = "";
      try {
        request.clone();
      } catch (error) {
        refused = (error as Error).name;
      }
      return Response.json({ a, b, cloneIsRequest: clone instanceof Request, refused });
    });
    const res = await fetch(`${running.url}/c`, { method: "POST", body: "twice" });
    expect(await res.json()).toEqual({
      a: "twice",
      b: "twice",
      cloneIsRequest: true,
      refused: "TypeError",
    });
  });

  it("passes through fetch() as a request of its own (an upstream call with the caller's body)", async () => {
    const upstream = await serve(
      async (request) => new Response(`upstream got ${await request.text()}`),
    );
    try {
      running = await serve((request) =>
        fetch(new Request(`${upstream.url}/x`, request)).then(
          async (r) => new Response(await r.text()),
        ),
      );
      const res = await fetch(`${running.url}/x`, { method: "POST", body: "forwarded" });
      expect(await res.text()).toBe("upstream got forwarded");
    } finally {
      await upstream.close(100);
    }
  });

  it("aborts its signal when the client goes away mid-request, and not after a full answer", async () => {
    const signals: AbortSignal[] = [];
    let aborted: () => void = () => {};
    const sawAbort = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    running = await serve(async (request) => {
      signals.push(request.signal);
      if (new URL(request.url).pathname === "/slow") {
        request.signal.addEventListener("abort", () => aborted());
        await sawAbort;
      }
      return new Response("done");
    });
    expect(await (await fetch(`${running.url}/fast`)).text()).toBe("done");
    const client = new AbortController();
    const slow = fetch(`${running.url}/slow`, { signal: client.signal }).catch(() => "gone");
    while (signals.length < 2) await sleep(5);
    client.abort();
    expect(await slow).toBe("gone");
    await sawAbort;
    await sleep(20);
    expect(signals.map((signal) => signal.aborted)).toEqual([false, true]);
  });

  it("gives an aborted signal to a handler that first reads it after the client left", async () => {
    let readLate!: (signal: AbortSignal) => void;
    const late = new Promise<AbortSignal>((resolve) => {
      readLate = resolve;
    });
    running = await serve(async (request) => {
      await sleep(150);
      readLate(request.signal);
      return new Response("late");
    });
    const client = new AbortController();
    const answer = fetch(running.url, { signal: client.signal }).catch(() => "gone");
    await sleep(50);
    client.abort();
    expect(await answer).toBe("gone");
    expect((await late).aborted).toBe(true);
  });
});
