import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  describeMetagraphSource,
  httpMetagraph,
  jsonFileMetagraph,
  MetagraphError,
  metagraphFromConfig,
  parseMetagraph,
  staticMetagraph,
} from "./metagraph-provider.js";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../test/weights/${name}`, import.meta.url));
const expected = new Map([
  ["5OwnerBurnHotkey", 0],
  ["5Alice", 1],
  ["5Bob", 2],
  ["5Carol", 4],
  ["5Dave", 5],
]);

describe("parseMetagraph", () => {
  it("reads the hotkeys list (index = uid, null = empty slot)", () => {
    expect(parseMetagraph({ hotkeys: ["a", null, "c", ""] })).toEqual(
      new Map([
        ["a", 0],
        ["c", 2],
      ]),
    );
  });

  it("reads the hotkey -> uid record", () => {
    expect(parseMetagraph({ a: 0, c: 2 })).toEqual(
      new Map([
        ["a", 0],
        ["c", 2],
      ]),
    );
  });

  it("reads an empty document of either shape as an empty metagraph", () => {
    expect(parseMetagraph({ hotkeys: [] }).size).toBe(0);
    expect(parseMetagraph({}).size).toBe(0);
  });

  it.each([
    ["an array", ["a", "b"], /JSON object/],
    ["null", null, /JSON object/],
    ["a string", "a", /JSON object/],
    ["a number in the list", { hotkeys: ["a", 5] }, /hotkeys\[1\] must be a string/],
    ["a hotkey on two uids", { hotkeys: ["a", "b", "a"] }, /uid 2 is also at uid 0/],
    ["a fractional uid", { a: 1.5 }, /integer from 0 to 65535/],
    ["a negative uid", { a: -1 }, /integer/],
    ["a uid past u16", { a: 65_536 }, /integer/],
    ["a uid as a string", { a: "1" }, /integer/],
    ["two hotkeys on one uid", { a: 3, b: 3 }, /uid 3 is given to more than one hotkey/],
    ["more than 65536 slots", { hotkeys: new Array(65_537).fill(null) }, /more than 65536/],
  ])("refuses %s", (_label, document, message) => {
    expect(() => parseMetagraph(document)).toThrow(MetagraphError);
    expect(() => parseMetagraph(document)).toThrow(message);
  });
});

describe("jsonFileMetagraph", () => {
  it.each([["metagraph-hotkeys.json"], ["metagraph-map.json"]])(
    "reads the fixture %s",
    async (name) => {
      expect(await jsonFileMetagraph(fixture(name)).uids()).toEqual(expected);
    },
  );

  it("re-reads the file on every call, so it can be replaced live", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "metagraph-")), "m.json");
    writeFileSync(path, JSON.stringify({ hotkeys: ["a"] }));
    const provider = jsonFileMetagraph(path);
    expect(await provider.uids()).toEqual(new Map([["a", 0]]));
    writeFileSync(path, JSON.stringify({ hotkeys: ["b", "a"] }));
    expect(await provider.uids()).toEqual(
      new Map([
        ["b", 0],
        ["a", 1],
      ]),
    );
  });

  it("fails clearly on a missing file or invalid JSON", async () => {
    await expect(jsonFileMetagraph("/nonexistent/metagraph.json").uids()).rejects.toThrow(
      /cannot read the metagraph file \(ENOENT\)/,
    );
    const path = join(mkdtempSync(join(tmpdir(), "metagraph-")), "bad.json");
    writeFileSync(path, "{not json");
    await expect(jsonFileMetagraph(path).uids()).rejects.toThrow(/not valid JSON/);
  });
});

describe("httpMetagraph over a real socket", () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? "");
      if (req.url?.startsWith("/list"))
        return res.end(
          JSON.stringify({
            hotkeys: ["5OwnerBurnHotkey", "5Alice", "5Bob", null, "5Carol", "5Dave"],
          }),
        );
      if (req.url === "/map") return res.end(JSON.stringify(Object.fromEntries(expected)));
      if (req.url === "/broken") return res.end("<html>");
      if (req.url === "/huge")
        return res.end(
          JSON.stringify({
            hotkeys: new Array(5000).fill("5XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
          }),
        );
      if (req.url === "/slow") return;
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  it("reads both shapes", async () => {
    expect(await httpMetagraph(`${base}/list`, { timeoutMs: 2000 }).uids()).toEqual(expected);
    expect(await httpMetagraph(`${base}/map`, { timeoutMs: 2000 }).uids()).toEqual(expected);
  });

  it("fails on an error status, bad JSON, a timeout or an oversized document, never echoing the URL", async () => {
    const secretUrl = `${base}/down?token=s3cret-query-token`;
    const failures = [
      [httpMetagraph(secretUrl, { timeoutMs: 2000 }), /answered HTTP 503/],
      [httpMetagraph(`${base}/broken`, { timeoutMs: 2000 }), /did not return valid JSON/],
      [httpMetagraph(`${base}/slow`, { timeoutMs: 200 }), /unreachable \(timed out\)/],
      [
        httpMetagraph(`${base}/huge`, { timeoutMs: 2000, maxBytes: 10_000 }),
        /larger than 10000 bytes/,
      ],
      [
        httpMetagraph("http://127.0.0.1:1/refused", { timeoutMs: 2000 }),
        /unreachable \(ECONNREFUSED\)/,
      ],
    ] as const;
    for (const [provider, message] of failures) {
      const error = await provider.uids().then(
        () => null,
        (e: Error) => e,
      );
      expect(error).toBeInstanceOf(MetagraphError);
      expect(error!.message).toMatch(message);
      expect(error!.message).not.toContain("s3cret");
      expect(error!.message).not.toContain("127.0.0.1");
    }
    expect(seen).toContain("/down?token=s3cret-query-token");
  });
});

describe("metagraphFromConfig", () => {
  it("gives null without a source", () => {
    expect(metagraphFromConfig(undefined, { timeoutMs: 1000 })).toBeNull();
    expect(metagraphFromConfig("", { timeoutMs: 1000 })).toBeNull();
  });

  it("reads a path or a file: URL", async () => {
    expect(
      await metagraphFromConfig(fixture("metagraph-map.json"), { timeoutMs: 1000 })!.uids(),
    ).toEqual(expected);
    const url = pathToFileURL(fixture("metagraph-hotkeys.json")).href;
    expect(await metagraphFromConfig(url, { timeoutMs: 1000 })!.uids()).toEqual(expected);
  });

  it("describes a URL source without its credentials", () => {
    expect(describeMetagraphSource("https://user:pw@example.test/m.json?key=abc")).toBe(
      "https://example.test/m.json",
    );
    expect(describeMetagraphSource("/etc/platform/metagraph.json")).toBe(
      "/etc/platform/metagraph.json",
    );
  });
});

describe("staticMetagraph", () => {
  it("accepts a map, a record or a list, and hands out copies", async () => {
    const fromList = staticMetagraph(["a", null, "b"]);
    const first = await fromList.uids();
    first.set("intruder", 9);
    expect(await fromList.uids()).toEqual(
      new Map([
        ["a", 0],
        ["b", 2],
      ]),
    );
    expect(await staticMetagraph({ a: 3 }).uids()).toEqual(new Map([["a", 3]]));
    expect(await staticMetagraph(new Map([["a", 7]])).uids()).toEqual(new Map([["a", 7]]));
  });
});
