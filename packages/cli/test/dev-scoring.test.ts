// The newcomer's path, end to end with the real binary: `platform dev` from the repository (what
// `npm start` runs) starts the scoring challenge beside the template with LLM_GATE=off and says
// so; `platform submit scoring good.zip` goes through the master's signed upload to the bridge;
// the worker scores it in the real evaluation image; the leaderboard and the weights show it.
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probeDocker } from "@platform/challenge-sdk/sandbox";
import { isCi } from "@platform/core/testing";
import Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import type { DevReady } from "../src/commands/dev.js";
import { repo } from "./built-packages.js";
import { runCli, spawnCli, waitForOutput } from "./run-cli.js";

const IMAGE = "platform/scoring-eval:local";
const goodZip = join(repo, "examples", "scoring-challenge", "bundles", "good.zip");

async function missing(): Promise<string | null> {
  const docker = new Docker();
  const probe = await probeDocker(docker);
  if (!probe.ok) return `no Docker engine answers (${probe.reason})`;
  const found = await docker
    .getImage(IMAGE)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  return found ? null : `${IMAGE} is missing (bash examples/scoring-challenge/eval-image/build.sh)`;
}
const why = await missing();
if (why && isCi()) throw new Error(`CI, but ${why}`);
if (why) console.warn(`!! platform dev + scoring challenge end to end SKIPPED: ${why}`);

const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      await once(child, "close");
    }
  }
});

describe.skipIf(why !== null)("npm start, then a miner submits bundles/good.zip", () => {
  it("is scored, ranked and paid; dev said the LLM gate is off", async () => {
    const adminToken = "dev-scoring-test-admin-token-0123456789";
    const env = {
      PLATFORM_HOME: mkdtempSync(join(tmpdir(), "cli-dev-scoring-home-")),
      ADMIN_TOKEN: adminToken,
      ADMIN_TOKEN_FILE: "",
      DATABASE_URL: "",
      PLATFORM_MASTER_URL: "",
      // No LLM configured: dev's default applies.
      LLM_BASE_URL: "",
      LLM_GATE: "",
      EVAL_IMAGE: "",
      // A short stream keeps the scored run to seconds; the pipeline is the same.
      TOKEN_BUDGET: "16384",
      HOLDOUT_BYTES: "4096",
    };
    const key = await runCli(["keys", "new", "--json"], { env });
    expect(key.code).toBe(0);
    const hotkey = (JSON.parse(key.stdout) as { ss58Address: string }).ss58Address;

    const dataDir = mkdtempSync(join(tmpdir(), "cli-dev-scoring-data-"));
    // No local chain: this is the scoring challenge's path to the master's snapshot (the chain's
    // own path, registration lag included, is dev.test.ts's and the miner e2e's).
    const child = spawnCli(["dev", "--port", "0", "--data-dir", dataDir, "--json", "--no-chain"], {
      cwd: repo,
      env,
    });
    children.add(child);
    const [line] = await waitForOutput(child, /^\{"status":"ready".*\}$/m, 180_000);
    const ready = JSON.parse(line) as DevReady;
    const scoring = ready.challenges.find((c) => c.slug === "scoring");
    expect(scoring, "npm start runs the scoring challenge").toBeDefined();
    expect(ready.challenges.map((c) => c.slug)).toContain("shortest-tour");
    expect(scoring!.notes).toEqual([
      expect.stringMatching(/^no LLM configured \(LLM_BASE_URL is unset\): LLM_GATE=off/),
    ]);

    const submitted = await runCli(
      ["submit", "scoring", goodZip, "--master", ready.master_url, "--json"],
      { env },
    );
    expect(submitted.stderr).toBe("");
    expect(submitted.code).toBe(0);
    const accepted = JSON.parse(submitted.stdout) as Record<string, unknown>;
    expect(accepted).toMatchObject({
      hotkey,
      status: "pending",
      filename: "good.zip",
      llm_gate: "off",
    });
    const id = String(accepted.id);

    const status = await runCli(
      [
        "status",
        "scoring",
        id,
        "--master",
        ready.master_url,
        "--watch",
        "--interval",
        "1",
        "--json",
      ],
      { env },
    );
    expect(status.code).toBe(0);
    const record = JSON.parse(status.stdout) as Record<string, number | string | null>;
    expect(record).toMatchObject({ id, hotkey, status: "completed", anti_cheat_multiplier: 1 });
    const bpb = record.bpb as number;
    expect(bpb).toBeGreaterThan(0);
    expect(bpb).toBeLessThan(8); // better than knowing nothing
    expect(record.final_score).toBeCloseTo(1 / (1 + bpb), 12);

    const board = (await (await fetch(`${scoring!.proxy_url}/v1/leaderboard`)).json()) as {
      entries: { rank: number; hotkey: string; submission_id: string; score: number }[];
    };
    expect(board.entries).toEqual([
      { rank: 1, hotkey, submission_id: id, score: record.final_score },
    ]);

    const collected = await fetch(`${ready.master_admin_url}/v1/admin/weights/collect`, {
      method: "POST",
      headers: { "x-admin-token": adminToken },
    });
    expect(collected.status).toBe(200);
    const latest = (await (await fetch(ready.weights_url)).json()) as {
      hotkeys: Record<string, number>;
      sources: { slug: string; status: string }[];
    };
    expect(latest.hotkeys[hotkey]).toBeGreaterThan(0);
    expect(latest.sources).toContainEqual(
      expect.objectContaining({ slug: "scoring", status: "ok" }),
    );

    child.kill("SIGTERM");
    const [code] = await once(child, "close");
    expect(code).toBe(0);
  }, 420_000);
});
