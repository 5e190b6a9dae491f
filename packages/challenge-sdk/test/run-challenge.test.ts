import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createMinerKey } from "@platform/challenge-sdk/testing";
import { signRequest } from "@platform/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const main = fileURLToPath(new URL("./fixtures/echo-main.ts", import.meta.url));
const TOKEN = "ct_run_challenge_token_0123456789abcdef";

interface Child {
  process: ChildProcess;
  url: Promise<string>;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startMain(env: Record<string, string>): Child {
  const child = spawn(
    process.execPath,
    ["--conditions=@platform/source", "--import", "tsx", main],
    {
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("READY ")) resolve(line.slice(6));
    });
    exited.then((code) => reject(new Error(`exited with ${code} before ready:\n${stderr}`)));
  });
  url.catch(() => {});
  return { process: child, url, stderr: () => stderr, exited };
}

describe("runChallenge in a real process", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "sdk-run-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const env = () => ({
    CHALLENGE_TOKEN: TOKEN,
    PLATFORM_CHALLENGE_SLUG: "echo-scores",
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
  });

  it("serves from the environment, keeps data in DATA_DIR across restarts, stops on SIGTERM", async () => {
    const miner = await createMinerKey();
    const first = startMain(env());
    const url = await first.url;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const body = JSON.stringify({ score: 9 });
    const headers = {
      "content-type": "application/json",
      ...signRequest(miner, { method: "POST", url: `${url}/v1/scores`, body, slug: "echo-scores" }),
    };
    expect((await fetch(`${url}/v1/scores`, { method: "POST", headers, body })).status).toBe(201);
    first.process.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    // The token never reaches a log line, whatever was logged.
    expect(first.stderr()).toContain("challenge listening");
    expect(first.stderr()).not.toContain(TOKEN);

    const second = startMain(env());
    const again = await second.url;
    const weights = await fetch(`${again}/internal/v1/get_weights`, {
      headers: { authorization: `Bearer ${TOKEN}`, "x-platform-challenge-slug": "echo-scores" },
    });
    expect(await weights.json()).toEqual({
      challenge_slug: "echo-scores",
      epoch: 7,
      weights: { [miner.hotkey]: 1 },
    });
    second.process.kill("SIGINT");
    expect(await second.exited).toBe(0);
  });

  it("exits 1 on a bad configuration, naming every bad variable and no value", async () => {
    const child = startMain({
      PORT: "eighty",
      CHALLENGE_TOKEN: "tiny-secret",
      PLATFORM_CHALLENGE_SLUG: "someone-else",
      ECHO_MAX_SCORE: "-5",
      DATA_DIR: dataDir,
    });
    expect(await child.exited).toBe(1);
    const stderr = child.stderr();
    expect(stderr).toContain("Invalid challenge configuration");
    for (const variable of [
      "PORT",
      "CHALLENGE_TOKEN",
      "PLATFORM_CHALLENGE_SLUG",
      "ECHO_MAX_SCORE",
    ]) {
      expect(stderr).toContain(`- ${variable}:`);
    }
    for (const value of ["eighty", "tiny-secret", "someone-else", "-5"])
      expect(stderr).not.toContain(value);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
