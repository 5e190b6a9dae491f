// `platform status --watch` against a master's submission read on a real socket: it polls
// while the submission moves, and stops at a final status or a hold.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../test/run-cli.js";

// What each submission answers, poll after poll (the last one repeats).
const SCRIPTS: Record<string, Record<string, unknown>[]> = {
  "7": [{ status: "pending" }, { status: "running" }, { status: "completed", final_score: 0.2 }],
  "8": [
    { status: "pending" },
    { status: "held", error: "the LLM gate did not answer: held for an operator" },
  ],
};
const polls: Record<string, number> = {};
const server = createServer((request, response) => {
  const id = /^\/v1\/challenges\/scoring\/submissions\/(\d+)$/.exec(request.url ?? "")?.[1];
  const script = id ? SCRIPTS[id] : undefined;
  if (!id || !script) {
    response.writeHead(404).end();
    return;
  }
  const seen = polls[id] ?? 0;
  polls[id] = seen + 1;
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify({ id, ...script[Math.min(seen, script.length - 1)] }));
});
let master: string;

beforeAll(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  master = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

const watch = (id: string) =>
  runCli(["status", "scoring", id, "--watch", "--interval", "1", "--json", "--master", master]);

describe("platform status --watch", () => {
  it("polls until a final status", async () => {
    const result = await watch("7");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: "7", status: "completed", final_score: 0.2 });
    expect(polls["7"]).toBe(3);
  }, 60_000);

  it("stops at held: nothing changes until an operator acts, so it does not poll for a day", async () => {
    const result = await watch("8");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: "8", status: "held" });
    expect(polls["8"]).toBe(2);
  }, 60_000);
});
