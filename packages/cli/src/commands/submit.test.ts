// `platform submit` of a ZIP through a real master to a challenge's bridge: what reaches the
// challenge is the miner's exact bytes, the verified hotkey, and the file name the miner signed.
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@platform/core";
import { createMaster, loadMasterConfig, type Master } from "@platform/master";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../test/run-cli.js";

const goodZip = fileURLToPath(
  new URL("../../../../examples/scoring-challenge/bundles/good.zip", import.meta.url),
);

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let master: Master;
let masterUrl: string;
let challengeToken: string;
let upstream: Server;
const received: Received[] = [];
const env = { PLATFORM_HOME: mkdtempSync(join(tmpdir(), "cli-submit-home-")) };

beforeAll(async () => {
  // The challenge: answers its bridge as the scoring challenge does (201, the status record);
  // anything else the master asks (its weights collection) gets a 404 and is not recorded.
  upstream = createServer((request, response) => {
    if (request.url !== "/internal/v1/bridge/submissions") {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ detail: "not here", code: "not_found" }));
      return;
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks),
      });
      response.writeHead(201, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: `sub-${received.length}`, status: "pending" }));
    });
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const { port } = upstream.address() as AddressInfo;

  const dataDir = mkdtempSync(join(tmpdir(), "cli-submit-master-"));
  const config = loadMasterConfig(
    { host: "127.0.0.1", port: 0, dataDir },
    // Its challenge is this test's own upstream, not a container the master runs.
    { ADMIN_TOKEN: "submit-test-admin-token-0123456789", PLATFORM_RECONCILER: "false" },
  );
  master = await createMaster(config, {
    logger: createLogger({ name: "test-master", level: "silent" }),
  });
  masterUrl = (await master.listen()).url;
  const { tokens } = await master.store.create({
    slug: "scoring",
    name: "Scoring",
    image: "local/scoring:1",
    version: "1",
    status: "active",
    internal_base_url: `http://127.0.0.1:${port}`,
    emission_percent: 100,
    api_version: "1.0",
  });
  challengeToken = tokens.challenge_token;
  expect((await runCli(["keys", "new", "--json"], { env })).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await master?.close();
  upstream?.close();
});

describe("platform submit <slug> <file.zip>", () => {
  it("uploads the ZIP's exact bytes through the master's signed route to the bridge, with its name", async () => {
    const key = JSON.parse((await runCli(["keys", "show", "--json"], { env })).stdout) as {
      ss58Address: string;
    };
    const result = await runCli(["submit", "scoring", goodZip, "--master", masterUrl, "--json"], {
      env,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: "sub-1", status: "pending" });

    expect(received).toHaveLength(1);
    const [bridge] = received;
    expect(bridge!.method).toBe("POST");
    expect(bridge!.headers["content-type"]).toBe("application/zip");
    expect(bridge!.headers["x-submission-filename"]).toBe("good.zip");
    expect(bridge!.headers["x-platform-verified-hotkey"]).toBe(key.ss58Address);
    expect(bridge!.headers.authorization).toBe(`Bearer ${challengeToken}`);
    expect(bridge!.body.equals(readFileSync(goodZip))).toBe(true);
  }, 60_000);

  it("a name the master will not forward is refused by the master, in a sentence", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-submit-file-"));
    const hidden = join(dir, ".hidden.zip");
    writeFileSync(hidden, readFileSync(goodZip));
    const before = received.length;
    const result = await runCli(["submit", "scoring", hidden, "--master", masterUrl], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\nerror: the master answered 400 .*\[invalid_filename\]\n$/);
    expect(received).toHaveLength(before);
  }, 60_000);
});
