import { afterEach, describe, expect, it, vi } from "vitest";
import { Cleanup, chainClient, chainNode, until } from "./_test-chain.js";

// Its own file: the console shim is process-wide and installed once, by the first chain client,
// so the raw console must be recorded before any client of this process exists.
describe("@polkadot's console lines", () => {
  const cleanup = new Cleanup();
  afterEach(async () => {
    await cleanup.run();
    vi.restoreAllMocks();
  });

  it("go through our logger as JSON named polkadot; other console calls are untouched", async () => {
    const raw: unknown[][] = [];
    for (const method of ["error", "warn", "log"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        raw.push(args);
      });
    }
    const stderr: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
    const json = () =>
      stderr.flatMap((chunk) => chunk.split("\n").filter(Boolean)).map((line) => JSON.parse(line));

    const node = await chainNode(cleanup);
    const client = chainClient(cleanup, [node.url], {
      callTimeoutMs: 1_000,
      connectTimeoutMs: 1_000,
    });
    await client.finalized();
    // Stopping the node under the client makes @polkadot log its lost subscriptions and calls.
    void client.finalized().catch(() => undefined);
    await node.close();
    await until(() => json().some((line) => line.name === "polkadot"), 10_000);

    const polkadot = json().filter((line) => line.name === "polkadot");
    expect(polkadot).toContainEqual(
      expect.objectContaining({
        level: "error",
        origin: "RPC-CORE",
        msg: expect.stringMatching(/disconnected/),
      }),
    );
    for (const line of polkadot) {
      expect(line).toMatchObject({
        level: expect.stringMatching(/^(error|warn|info)$/),
        name: "polkadot",
        origin: expect.stringMatching(/^[A-Z0-9/_-]+$/),
        msg: expect.any(String),
      });
    }
    expect(raw.filter((args) => /^\s*[A-Z0-9/_-]+:$/.test(String(args[1])))).toEqual([]);

    console.error("unrelated", { code: 1 });
    console.error("2026-11-29 05:09:19", "not a polkadot type:");
    expect(raw.slice(-2)).toEqual([
      ["unrelated", { code: 1 }],
      ["2026-11-29 05:09:19", "not a polkadot type:"],
    ]);
  });
});
