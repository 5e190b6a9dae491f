// `platform dev` with a project whose challenge.config.json has a dev section: the real binary,
// a real master and challenge, the real Docker engine (or none at all).
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevReady } from "../src/commands/dev.js";
import { repo } from "./built-packages.js";
import { runCli, spawnCli, waitForOutput } from "./run-cli.js";

const READY = /^\{"status":"ready".*\}$/m;
const ABSENT_IMAGE = "platform-test/never-built-by-anyone:1";
const SEED_NOTE = "TASK_SEED=7 for development (KEEP_SEED unset)";

const children = new Set<ChildProcess>();
let root: string;
let project: string;

beforeAll(async () => {
  // Inside the repository, so the generated project resolves the workspace packages.
  mkdirSync(join(repo, ".platform", "tmp"), { recursive: true });
  root = mkdtempSync(join(repo, ".platform", "tmp", "dev-settings-"));
  project = join(root, "tours");
  const created = await runCli(["challenge", "create", "tours", "--out", project]);
  expect(created.code).toBe(0);
  const file = join(project, "challenge.config.json");
  const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  config.dev = {
    env: { TASK_SEED: { value: "7", unless: "KEEP_SEED", note: SEED_NOTE } },
    docker: {
      note: "tours wait for one",
      images: [{ image: ABSENT_IMAGE, build: "bash {project}/eval/build.sh" }],
    },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
}, 120_000);

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      await once(child, "close");
    }
  }
  rmSync(root, { recursive: true, force: true });
});

const baseEnv = { ADMIN_TOKEN: "", ADMIN_TOKEN_FILE: "", DATABASE_URL: "" };

async function devRun(env: Record<string, string>) {
  const child = spawnCli(["dev", "--port", "0", "--json"], { cwd: project, env });
  children.add(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  const [line] = await waitForOutput(child, READY, 120_000);
  const ready = JSON.parse(line) as DevReady;
  const task = (await (await fetch(`${ready.challenges[0]!.proxy_url}/v1/task`)).json()) as {
    task_id: string;
  };
  child.kill("SIGTERM");
  const [code] = await once(child, "close");
  return { ready, task, stderr, code };
}

describe("platform dev with a project's dev section", () => {
  it("sets a default the user left unset and says so; names a missing image and its build command", async () => {
    // An empty value is unset: the default applies.
    const { ready, task, stderr, code } = await devRun({ ...baseEnv, TASK_SEED: "" });
    expect(task.task_id).toBe("tsp-12-7");
    const notes = [
      SEED_NOTE,
      `the image ${ABSENT_IMAGE} is missing; build it with: bash ./eval/build.sh`,
    ];
    expect(ready.challenges[0]!.notes).toEqual(notes);
    for (const note of notes) expect(stderr).toContain(`[platform dev] tours: ${note}`);
    expect(code).toBe(0);
  }, 180_000);

  it("keeps out of the way of the user's settings; says when no Docker engine answers, and still runs", async () => {
    const socket = join(root, "no-engine.sock");
    const kept = await devRun({ ...baseEnv, KEEP_SEED: "1", DOCKER_HOST: `unix://${socket}` });
    expect(kept.task.task_id).toBe("tsp-12-2024");
    expect(kept.ready.challenges[0]!.notes).toEqual([
      expect.stringMatching(/^no Docker engine answers \(.*\): tours wait for one$/),
    ]);
    expect(kept.code).toBe(0);

    const own = await devRun({ ...baseEnv, TASK_SEED: "9" });
    expect(own.task.task_id).toBe("tsp-12-9");
    expect(own.ready.challenges[0]!.notes).not.toContain(SEED_NOTE);
  }, 300_000);

  it("refuses a dev section it does not understand, naming the field", async () => {
    const bad = join(root, "bad");
    mkdirSync(join(bad, "src"), { recursive: true });
    writeFileSync(join(bad, "src", "challenge.ts"), "export const challenge = {};\n");
    writeFileSync(
      join(bad, "challenge.config.json"),
      JSON.stringify({ dev: { env: { CHALLENGE_TOKEN: "mine" } } }),
    );
    const result = await runCli(["dev", "--port", "0"], { cwd: bad, env: baseEnv });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "challenge.config.json: dev.env.CHALLENGE_TOKEN: platform dev sets this variable itself",
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);
});
