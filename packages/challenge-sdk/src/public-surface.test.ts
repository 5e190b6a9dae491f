// The SDK's public surface, as a challenge author sees it: the main entry holds what every
// challenge needs and nothing of the master's or the sandbox's, each subpath its own concern,
// and docs/challenge-sdk.md lists every name of the main entry (with its count), /jobs and
// /proxy-contract, /signing and /client. Names are read with the TypeScript checker, so types
// count as well as values.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const sdk = (path: string) => join(repo, "packages/challenge-sdk/src", path);
const core = (path: string) => join(repo, "packages/core/src", path);

const ENTRIES = {
  main: sdk("index.ts"),
  jobs: sdk("jobs/index.ts"),
  tasks: sdk("tasks/index.ts"),
  sandbox: sdk("sandbox/index.ts"),
  "proxy-contract": sdk("proxy-contract/index.ts"),
  signing: sdk("signing/index.ts"),
  zip: sdk("zip/index.ts"),
  tokens: sdk("tokens/index.ts"),
  client: sdk("client/index.ts"),
  testing: sdk("testing/index.ts"),
  core: core("index.ts"),
  "core/testing": core("testing/index.ts"),
} as const;
type Entry = keyof typeof ENTRIES;

/** Names that must never reach the main entry: master-only, sandbox internals, test helpers. */
const INTERNAL = [
  // the sandbox and the task runner's plumbing
  "runAttachedContainer",
  "OutputCapture",
  "refuseWeakening",
  "resolveTaskLimits",
  "hardenedContainerOptions",
  "taskFilesArchive",
  "checkTaskFiles",
  "dockerTaskRunner",
  "brokerTaskRunner",
  // the master's proxy
  "resolveProxyPath",
  "splitProxyTarget",
  "isBlockedProxyPath",
  "PLATFORM_HEADERS",
  // test helpers
  "createTestDatabase",
  "testBackends",
  "startTestChallenge",
  // what the route kinds do for an author
  "verifyMinerRequest",
  "decodeJsonBody",
  "reserveNonce",
  "takeRateLimit",
  "releaseRateLimit",
  "bearerAuth",
  "loadChallengeConfig",
  "ChallengeRuntime",
  // jobs have their own entry
  "createJobQueue",
  "runWorker",
];

let exportsOf: Record<Entry, string[]>;

beforeAll(() => {
  const files = Object.values(ENTRIES);
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    customConditions: ["@platform/source"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  exportsOf = Object.fromEntries(
    Object.entries(ENTRIES).map(([entry, file]) => {
      const source = program.getSourceFile(file);
      const module = source && checker.getSymbolAtLocation(source);
      if (!module) throw new Error(`cannot read the module ${file}`);
      return [entry, checker.getExportsOfModule(module).map((symbol) => symbol.getName())];
    }),
  ) as Record<Entry, string[]>;
}, 60_000);

/** The names listed under `### \`<heading>\`` in docs/challenge-sdk.md, and the count it states. */
function documented(heading: string): { count: number | null; names: string[] } {
  const doc = readFileSync(join(repo, "docs/challenge-sdk.md"), "utf8");
  const start = doc.indexOf(`### \`${heading}\``);
  if (start < 0) throw new Error(`docs/challenge-sdk.md has no section for ${heading}`);
  const rest = doc.slice(start);
  const next = rest.indexOf("\n### ", 1);
  const section = next < 0 ? rest : rest.slice(0, next);
  const count = /\((\d+) exports\)/.exec(section.split("\n")[0] ?? "")?.[1];
  const names = [...section.matchAll(/^- `([A-Za-z_$][\w$]*)`:/gm)].map((match) => match[1]!);
  return { count: count === undefined ? null : Number(count), names };
}

/** Every index.ts under a folder (a package's entries and its folders' indexes). */
function indexFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return indexFiles(path);
    return entry.name === "index.ts" ? [path] : [];
  });
}

describe("the SDK's main entry", () => {
  it("exports exactly the names docs/challenge-sdk.md lists, as many as it says", () => {
    const docs = documented("@platform/challenge-sdk");
    expect([...exportsOf.main].sort()).toEqual([...docs.names].sort());
    expect(exportsOf.main.length).toBe(docs.count);
  });

  it("never exports an internal name", () => {
    for (const name of INTERNAL) expect(exportsOf.main, name).not.toContain(name);
  });

  it("shares no name with a subpath: each name has one home", () => {
    // Every subpath the package exports (its package.json), each read here: a new entry added
    // there and not to ENTRIES fails this test instead of going unchecked.
    const manifest = JSON.parse(
      readFileSync(join(repo, "packages/challenge-sdk/package.json"), "utf8"),
    ) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(manifest.exports)
      .filter((key) => key.startsWith("./") && key !== "./package.json")
      .map((key) => key.slice(2));
    expect(subpaths.length).toBeGreaterThan(5);
    for (const entry of subpaths) {
      expect(Object.keys(ENTRIES), `ENTRIES lists /${entry}`).toContain(entry);
      const shared = exportsOf[entry as Entry].filter((name) => exportsOf.main.includes(name));
      expect(shared, `names in both the main entry and /${entry}`).toEqual([]);
    }
  });

  it("loads at run time with the values the checker sees", async () => {
    const main = (await import("@platform/challenge-sdk")) as Record<string, unknown>;
    for (const name of Object.keys(main)) expect(exportsOf.main).toContain(name);
    for (const name of INTERNAL) expect(main).not.toHaveProperty(name);
    expect(typeof main["defineChallenge"]).toBe("function");
    expect(typeof main["runChallenge"]).toBe("function");
    expect(typeof main["readArchive"]).toBe("function");
  });
});

/** Every .ts file under `dir` (no node_modules, no dist). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === "node_modules" || entry.name === "dist" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("the main entry's runtime names", () => {
  // What proves the SDK: each value the main entry offers is one the template (what `platform
  // challenge create` copies) or a reference challenge really imports; the rest has a subpath.
  const users = [
    join(repo, "templates/challenge"),
    join(repo, "examples/scoring-challenge"),
    join(repo, "examples/agent-eval-challenge"),
  ].flatMap(sourceFiles);

  it("are at most 40, and each is imported by the template or a reference challenge", async () => {
    const imported = new Set<string>();
    for (const file of users) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(
        /import\s*\{([^}]*)\}\s*from\s*"@platform\/challenge-sdk"/g,
      )) {
        for (const part of match[1]!.split(",")) {
          const name = part
            .replace(/^\s*type\s+/, "")
            .split(/\s+as\s+/)[0]!
            .trim();
          if (name) imported.add(name);
        }
      }
    }
    const runtime = Object.keys(await import("@platform/challenge-sdk"));
    expect(runtime.length).toBeLessThanOrEqual(40);
    expect(runtime.filter((name) => !imported.has(name))).toEqual([]);
  });
});

describe("the subpaths", () => {
  it.each(["jobs", "proxy-contract", "signing", "zip", "tokens", "client"] as const)(
    "/%s exports exactly what the docs list",
    (entry) => {
      const docs = documented(`@platform/challenge-sdk/${entry}`);
      expect([...exportsOf[entry]].sort()).toEqual([...docs.names].sort());
      if (docs.count !== null) expect(exportsOf[entry].length).toBe(docs.count);
    },
  );

  it("each loads on its own", async () => {
    const jobs = await import("@platform/challenge-sdk/jobs");
    expect(typeof jobs.createJobQueue).toBe("function");
    const contract = await import("@platform/challenge-sdk/proxy-contract");
    const signing = await import("@platform/challenge-sdk/signing");
    await signing.initCrypto();
    const pair = signing.keypairFromMnemonic(signing.generateMnemonic());
    const signature = signing.signMessage(pair, "a grant");
    expect(signing.verifySignature("a grant", signature, pair.address)).toBe(true);
    expect(signing.verifySignature("another grant", signature, pair.address)).toBe(false);
    expect(contract.resolveProxyPath("/v1/a/../b").segments).toEqual(["v1", "b"]);
    const proxies = contract.trustedProxies(contract.DEFAULT_TRUSTED_PROXIES);
    const forwarded = new Headers({ "x-forwarded-for": "203.0.113.9" });
    expect(contract.clientKey(forwarded, "127.0.0.1", proxies)).toBe("203.0.113.9");
    const tokens = await import("@platform/challenge-sdk/tokens");
    const key = new Uint8Array(32).fill(7);
    const issued = tokens.issueCapabilityToken({ key, scope: "surface/v1", id: "a1" });
    expect(tokens.readCapabilityToken(issued.token)?.id).toBe("a1");
    const client = await import("@platform/challenge-sdk/client");
    expect(client.retryAfterMs("30")).toBe(30_000);
    for (const entry of [
      await import("@platform/challenge-sdk/tasks"),
      await import("@platform/challenge-sdk/sandbox"),
      await import("@platform/challenge-sdk/testing"),
    ] as Record<string, unknown>[]) {
      expect(Object.keys(entry).length).toBeGreaterThan(0);
    }
    const coreTesting = await import("@platform/core/testing");
    expect(typeof coreTesting.createTestDatabase).toBe("function");
  });
});

describe("core's entries", () => {
  it("keep the test helpers out of the runtime entry", () => {
    for (const name of ["createTestDatabase", "testBackends", "testServerUrl"]) {
      expect(exportsOf.core).not.toContain(name);
      expect(exportsOf["core/testing"]).toContain(name);
    }
  });
});

describe("every package index", () => {
  const packages = ["core", "challenge-sdk", "master", "cli"];
  const indexes = packages.flatMap((name) => indexFiles(join(repo, "packages", name, "src")));

  it("lists its names (no `export *`) and never re-exports an internal `_` file", () => {
    expect(indexes.length).toBeGreaterThan(5);
    for (const file of indexes) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toMatch(/^\s*export\s+(type\s+)?\*/m);
      expect(text, file).not.toMatch(/^\s*export\s[^;]*from\s+"\.\/_/m);
    }
  });
});
