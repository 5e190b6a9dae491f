/**
 * The two reference workers, run by the miner's tool as local processes (in production each
 * runs inside its confidential VM image): `dist/review-worker.js` with the assignment token and
 * `dist/eval-worker.js` with the run token and the signed telemetry grant. Their lines are shown
 * as they come; their environment holds only what they need (never the mnemonic). The eval
 * worker runs agents in the agent image, built here when absent.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DEFAULT_AGENT_IMAGE } from "../eval-worker/eval-worker-settings.js";
import { MinerError } from "./challenge-client.js";

/**
 * The example's folder: this file runs as dist/miner.js (built) or src/miner/workers.ts (from
 * the sources, `npm run miner`); the folder holding challenge.config.json is the example.
 */
function exampleRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "challenge.config.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new MinerError("cannot find the agent-eval example's folder");
    dir = parent;
  }
  return dir;
}

/**
 * How to start a worker: as this tool runs. Built (dist/miner.js), the workers' bundles beside
 * it; from the sources (`npm run miner`, no build needed), their sources through tsx.
 */
function workerCommand(name: string): string[] {
  const root = exampleRoot();
  if (!import.meta.url.endsWith(".ts")) {
    const bundle = join(root, "dist", `${name}.js`);
    if (!existsSync(bundle)) throw new MinerError(`${bundle} is missing: run npm run build`);
    return [bundle];
  }
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return ["--conditions=@platform/source", "--import", tsx, join(root, "src", `${name}.ts`)];
}

/** Run `command` with `env` only (plus PATH), echoing its lines after `prefix` (null: quiet). */
function run(command: string, args: string[], env: Record<string, string>, prefix: string | null) {
  return new Promise<number>((resolve, reject) => {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const echo = (chunk: Buffer) => {
      if (prefix === null) return;
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() !== "") console.log(`${prefix}${line}`);
      }
    };
    child.stdout.on("data", echo);
    child.stderr.on("data", echo);
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? 1));
  });
}

export function runReviewWorker(input: { token: string; challengeUrl: string }): Promise<number> {
  return run(
    process.execPath,
    workerCommand("review-worker"),
    { REVIEW_SESSION_TOKEN: input.token, CHALLENGE_URL: input.challengeUrl },
    "  | ",
  );
}

export function runEvalWorker(input: {
  token: string;
  grant: unknown;
  challengeUrl: string;
  /** Where the attempt events route (/internal) answers; the proxy never forwards /internal. */
  internalUrl: string | null;
  agentImage: string;
}): Promise<number> {
  return run(
    process.execPath,
    workerCommand("eval-worker"),
    {
      EVAL_RUN_TOKEN: input.token,
      TELEMETRY_GRANT: JSON.stringify(input.grant),
      CHALLENGE_URL: input.challengeUrl,
      ...(input.internalUrl ? { CHALLENGE_INTERNAL_URL: input.internalUrl } : {}),
      AGENT_IMAGE: input.agentImage,
    },
    "  | ",
  );
}

/** The agent image, built (debootstrap + python3, a few minutes the first time) when absent. */
export async function ensureAgentImage(image: string): Promise<void> {
  if ((await run("docker", ["image", "inspect", image], {}, null)) === 0) return;
  if (image !== DEFAULT_AGENT_IMAGE) {
    throw new MinerError(`the agent image ${image} is not present (docker image inspect failed)`);
  }
  console.log(`miner: building ${image} (first time only: a few minutes)`);
  const script = join(exampleRoot(), "agent-image", "build.sh");
  const code = await run("bash", [script], {}, "  | ");
  if (code !== 0) throw new MinerError(`building ${image} failed (exit ${code}; output above)`);
}
