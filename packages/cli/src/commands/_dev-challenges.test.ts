import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  discoverChallengeModules,
  explicitChallenges,
  importModule,
  pickChallenge,
  projectImage,
} from "./_dev-challenges.js";

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "cli-dev-"));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(root, file, ".."), { recursive: true });
    writeFileSync(join(root, file), content);
  }
  return root;
}

const fakeChallenge = (slug: string) => ({
  slug,
  version: "1.0.0",
  name: slug,
  description: undefined,
  start: async () => ({ url: "http://x", close: async () => {} }),
  routes: () => [],
});

describe("--challenge flags", () => {
  it("collects every --challenge, in both spellings, before a --", () => {
    expect(
      explicitChallenges([
        "--challenge",
        "a.ts",
        "--json",
        "--challenge=b.ts",
        "--",
        "--challenge",
        "c.ts",
      ]),
    ).toEqual(["a.ts", "b.ts"]);
    expect(explicitChallenges(["--port", "0"])).toEqual([]);
  });

  it("refuses a --challenge without a value", () => {
    expect(() => explicitChallenges(["--challenge"])).toThrow(/needs a module path/);
    expect(() => explicitChallenges(["--challenge", "--json"])).toThrow(/needs a module path/);
  });
});

describe("which challenges platform dev runs", () => {
  const repo = () =>
    tree({
      "templates/challenge/package.json": "{}",
      "templates/challenge/src/challenge.ts": "",
      "examples/scoring-challenge/src/challenge.ts": "",
      "examples/agent-eval-challenge/src/challenge.ts": "",
      "examples/notes/README.md": "no challenge here",
    });

  it("in the repository: the template's, then every examples/*/src/challenge.ts", () => {
    const root = repo();
    const refs = discoverChallengeModules({
      cwd: root,
      explicit: [],
      templateDir: join(root, "templates", "challenge"),
    });
    expect(refs).toEqual([
      { path: join(root, "templates/challenge/src/challenge.ts"), origin: "template" },
      { path: join(root, "examples/agent-eval-challenge/src/challenge.ts"), origin: "example" },
      { path: join(root, "examples/scoring-challenge/src/challenge.ts"), origin: "example" },
    ]);
  });

  it("finds the repository's examples from the template's location, whatever the folder", () => {
    const root = repo();
    const elsewhere = mkdtempSync(join(tmpdir(), "cli-dev-cwd-"));
    const refs = discoverChallengeModules({
      cwd: elsewhere,
      explicit: [],
      templateDir: join(root, "templates", "challenge"),
    });
    expect(refs.map((ref) => ref.origin)).toEqual(["template", "example", "example"]);
  });

  it("inside a challenge project: only its ./src/challenge.ts", () => {
    const project = tree({
      "package.json": "{}",
      "src/challenge.ts": "",
      "examples/x/src/challenge.ts": "",
    });
    const root = repo();
    expect(
      discoverChallengeModules({
        cwd: project,
        explicit: [],
        templateDir: join(root, "templates", "challenge"),
      }),
    ).toEqual([{ path: join(project, "src/challenge.ts"), origin: "project" }]);
  });

  it("--challenge wins, relative to the current folder, each module once", () => {
    const root = repo();
    symlinkSync(join(root, "examples/scoring-challenge"), join(root, "linked"));
    const refs = discoverChallengeModules({
      cwd: root,
      explicit: ["examples/scoring-challenge/src/challenge.ts", "linked/src/challenge.ts"],
      templateDir: join(root, "templates", "challenge"),
    });
    expect(refs).toEqual([
      { path: join(root, "examples/scoring-challenge/src/challenge.ts"), origin: "explicit" },
    ]);
    expect(() =>
      discoverChallengeModules({ cwd: root, explicit: ["missing.ts"], templateDir: null }),
    ).toThrow(/no such file/);
  });

  it("without a template (a broken install) still runs the examples of the current folder", () => {
    const root = repo();
    expect(
      discoverChallengeModules({ cwd: root, explicit: [], templateDir: null }).map((r) => r.origin),
    ).toEqual(["example", "example"]);
  });
});

describe("loading a challenge module", () => {
  it("picks `challenge`, else the default export, else the only challenge exported", () => {
    const a = fakeChallenge("a");
    const b = fakeChallenge("b");
    expect(pickChallenge({ challenge: a, default: b }, "m.ts")).toBe(a);
    expect(pickChallenge({ default: b, other: 1 }, "m.ts")).toBe(b);
    expect(pickChallenge({ mine: a, helper: () => 1 }, "m.ts")).toBe(a);
    expect(() => pickChallenge({ helper: () => 1 }, "m.ts")).toThrow(/exports no challenge/);
    expect(() => pickChallenge({ x: a, y: b }, "m.ts")).toThrow(/exports 2 challenges/);
    expect(() => pickChallenge({ challenge: { slug: "x" } }, "m.ts")).toThrow(
      /exports no challenge/,
    );
  });

  it("imports a TypeScript module", async () => {
    const root = tree({
      "src/challenge.ts": "const slug: string = 'typed';\nexport const challenge = { slug };\n",
    });
    const module = await importModule(join(root, "src/challenge.ts"));
    expect(module["challenge"]).toEqual({ slug: "typed" });
  });

  it("reads the project's image from challenge.config.json, null when absent or empty", () => {
    const root = tree({
      "a/challenge.config.json": JSON.stringify({ image: "ghcr.io/me/a:1.0.0" }),
      "a/src/challenge.ts": "",
      "b/challenge.config.json": JSON.stringify({ image: null }),
      "b/src/challenge.ts": "",
      "c/challenge.config.json": "{not json",
      "c/src/challenge.ts": "",
      "d/src/challenge.ts": "",
    });
    expect(projectImage(join(root, "a/src/challenge.ts"))).toBe("ghcr.io/me/a:1.0.0");
    expect(projectImage(join(root, "b/src/challenge.ts"))).toBeNull();
    expect(projectImage(join(root, "c/src/challenge.ts"))).toBeNull();
    expect(projectImage(join(root, "d/src/challenge.ts"))).toBeNull();
  });
});
