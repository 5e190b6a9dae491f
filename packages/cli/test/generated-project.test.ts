// `platform challenge create`, then the generated project's own typecheck and test suite, the way
// an author runs them. The project is written under <repo>/.platform/tmp (gitignored), so node's
// resolution walks up to this repository's node_modules: @platform/* are the workspace packages,
// vitest and typescript are the repository's. A project does not know the `@platform/source`
// condition (nor should it), so it imports the SDK's built dist/. Like create-vite's own tests, it
// runs the BUILT CLI (dist/cli.js, with the template it carries in dist/template): the setup
// builds core, the SDK, the master and the CLI unless their dist/ is newer than their sources.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, repo, run } from "./built-packages.js";
import { waitForOutput } from "./run-cli.js";

const cliDist = join(repo, "packages", "cli", "dist", "cli.js");

describe("a project made by `platform challenge create`", () => {
  let root = "";
  let project = "";

  beforeAll(async () => {
    mkdirSync(join(repo, ".platform", "tmp"), { recursive: true });
    root = mkdtempSync(join(repo, ".platform", "tmp", "generated-"));
    project = join(root, "gen-chal");
    await ensureBuilt();
    const created = await run(
      process.execPath,
      [cliDist, "challenge", "create", "gen-chal", "--out", project, "--name", "Generated"],
      root,
    );
    expect(created.output).toContain("Created Generated (gen-chal 0.1.0)");
    expect(created.code).toBe(0);
  }, 300_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("typechecks (strict) against the published types", async () => {
    const result = await run(
      process.execPath,
      [join(repo, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", project],
      project,
    );
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  }, 120_000);

  it("passes its own tests: the conformance suite, the OpenAPI fuzz and the challenge's, under its new slug", async () => {
    const result = await run(
      process.execPath,
      [join(repo, "node_modules/vitest/vitest.mjs"), "run"],
      project,
    );
    expect(result.code, result.output).toBe(0);
    const plain = result.output.replace(/\u001b\[[0-9;]*m/g, "");
    expect(plain).toMatch(/Test Files\s+3 passed \(3\)/);
    expect(plain).toMatch(/OpenAPI fuzz of gen-chal: \d+ requests/);
    expect(plain).toMatch(/Tests\s+\d+ passed \(\d+\)/);
    expect(plain).not.toMatch(/skipped/);
    const passed = Number(plain.match(/Tests\s+(\d+) passed/)?.[1]);
    expect(passed).toBeGreaterThanOrEqual(30);
  }, 240_000);

  it("runs under the built CLI's `platform dev` (TypeScript loaded through tsx's register API)", async () => {
    const child = spawn(
      process.execPath,
      [cliDist, "dev", "--port", "0", "--json", "--data-dir", join(root, "dev-data")],
      {
        cwd: project,
        env: {
          ...process.env,
          ADMIN_TOKEN: "",
          ADMIN_TOKEN_FILE: "",
          DATABASE_URL: "",
          LOG_LEVEL: "warn",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    try {
      const [line] = await waitForOutput(child, /^\{"status":"ready".*\}$/m, 120_000);
      const ready = JSON.parse(line) as {
        master_url: string;
        challenges: { slug: string; module: string }[];
      };
      expect(ready.challenges).toEqual([
        expect.objectContaining({ slug: "gen-chal", module: join(project, "src", "challenge.ts") }),
      ]);
      const task = await fetch(`${ready.master_url}/challenges/gen-chal/v1/task`);
      expect(task.status).toBe(200);
      expect(await task.json()).toMatchObject({ task_id: "tsp-12-2024" });
    } finally {
      child.kill("SIGTERM");
    }
    const [code] = await once(child, "close");
    expect(code).toBe(0);
  }, 180_000);
});
