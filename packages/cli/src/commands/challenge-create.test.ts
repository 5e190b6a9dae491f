import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../../test/run-cli.js";
import { targetPath, templateFiles } from "./_template.js";

const template = fileURLToPath(new URL("../../../../templates/challenge/", import.meta.url));
const fresh = () => join(mkdtempSync(join(tmpdir(), "cli-create-")), "project");
const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");
const readJson = (dir: string, file: string) =>
  JSON.parse(read(dir, file)) as Record<string, unknown>;

describe("platform challenge create", () => {
  it("writes the template with only the identity rewritten and _gitignore renamed", async () => {
    const out = fresh();
    const result = await runCli(["challenge", "create", "my-chal", "--out", out]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Created My Chal (my-chal 0.1.0)");
    expect(result.stdout).toContain("npm install");
    expect(result.stdout).toContain("npm test");

    const expected = templateFiles(template).map(targetPath).sort();
    expect(templateFiles(out).sort()).toEqual(expected);
    expect(existsSync(join(out, ".gitignore"))).toBe(true);
    expect(existsSync(join(out, "_gitignore"))).toBe(false);
    expect(read(out, ".gitignore")).toBe(read(template, "_gitignore"));

    expect(readJson(out, "package.json")["name"]).toBe("my-chal");
    // Each @platform dependency at its own package's released version, not the CLI's for all.
    const own = (dir: string) =>
      `^${readJson(fileURLToPath(new URL(`../../../${dir}/`, import.meta.url)), "package.json")["version"]}`;
    expect(readJson(out, "package.json")["dependencies"]).toMatchObject({
      "@platform/challenge-sdk": own("challenge-sdk"),
    });
    expect(readJson(out, "package.json")["devDependencies"]).toMatchObject({
      "@platform/cli": own("cli"),
    });
    expect(readJson(out, "challenge.config.json")).toEqual({
      ...readJson(template, "challenge.config.json"),
      slug: "my-chal",
      name: "My Chal",
      version: "0.1.0",
      image: null,
    });
    // Everything else byte for byte, package.json aside from its name and @platform/* ranges.
    for (const file of templateFiles(template)) {
      if (file === "package.json" || file === "challenge.config.json") continue;
      expect(
        readFileSync(join(out, targetPath(file))).equals(readFileSync(join(template, file))),
        file,
      ).toBe(true);
    }
    const {
      name: _a,
      dependencies: _b,
      devDependencies: _c,
      ...rest
    } = readJson(out, "package.json");
    const {
      name: _d,
      dependencies: _e,
      devDependencies: _f,
      ...templateRest
    } = readJson(template, "package.json");
    expect(rest).toEqual(templateRest);
  });

  it("takes --name, --image and --version, and prints JSON with --json", async () => {
    const out = fresh();
    const result = await runCli([
      "challenge",
      "create",
      "scoring-v2",
      "--out",
      out,
      "--name",
      "Scoring, second edition",
      "--image",
      "ghcr.io/me/scoring-v2:2.0.0",
      "--version",
      "2.0.0",
      "--json",
    ]);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ slug: "scoring-v2", dir: out, version: "2.0.0" });
    expect(printed["files"]).toContain(".gitignore");
    expect(readJson(out, "challenge.config.json")).toMatchObject({
      slug: "scoring-v2",
      name: "Scoring, second edition",
      version: "2.0.0",
      image: "ghcr.io/me/scoring-v2:2.0.0",
    });
  });

  it("refuses a folder that is not empty (exit 1, nothing written) unless --overwrite", async () => {
    const out = fresh();
    mkdirSync(out);
    writeFileSync(join(out, "notes.txt"), "mine");
    writeFileSync(join(out, "package.json"), '{"name":"theirs"}');
    const refused = await runCli(["challenge", "create", "my-chal", "--out", out]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is not empty");
    expect(refused.stderr).toContain("--overwrite");
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(templateFiles(out).sort()).toEqual(["notes.txt", "package.json"]);

    const overwritten = await runCli([
      "challenge",
      "create",
      "my-chal",
      "--out",
      out,
      "--overwrite",
    ]);
    expect(overwritten.code).toBe(0);
    expect(readJson(out, "package.json")["name"]).toBe("my-chal");
    expect(read(out, "notes.txt")).toBe("mine");
    expect(existsSync(join(out, "src", "challenge.ts"))).toBe(true);
  });

  it("refuses a file where the folder should be", async () => {
    const out = fresh();
    mkdirSync(join(out, ".."), { recursive: true });
    writeFileSync(out, "a file");
    const result = await runCli(["challenge", "create", "my-chal", "--out", out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("is not a folder");
  });

  it("refuses a bad slug with exit 1 and writes nothing", async () => {
    for (const slug of ["My_Chal", "chal!", "chal-", "x", "sdk"]) {
      const out = fresh();
      const result = await runCli(["challenge", "create", slug, "--out", out]);
      expect(result.code, slug).toBe(1);
      expect(result.stderr).toMatch(/^error: ".*" is not a valid challenge slug/);
      expect(existsSync(out)).toBe(false);
    }
  });

  it("refuses a bad --version or --image, and a missing --out", async () => {
    const out = fresh();
    expect(
      (await runCli(["challenge", "create", "ok-slug", "--out", out, "--version", "1 0"])).code,
    ).toBe(1);
    expect(
      (await runCli(["challenge", "create", "ok-slug", "--out", out, "--image", "a b"])).code,
    ).toBe(1);
    expect(existsSync(out)).toBe(false);
    const missing = await runCli(["challenge", "create", "ok-slug"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout + missing.stderr).toMatch(/--out/);
  });
});
