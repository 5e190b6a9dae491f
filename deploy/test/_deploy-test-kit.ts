// What the deployment's tests share: the images, a child process with its output, free ports,
// polling, and a directory of fresh secret files as the deployment reads them.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const DEPLOY = fileURLToPath(new URL("..", import.meta.url));
export const MASTER_IMAGE = process.env["PLATFORM_MASTER_IMAGE"] || "platform/master:local";
export const POSTGRES_IMAGE = process.env["PLATFORM_POSTGRES_IMAGE"] || "platform/postgres:local";
/** busybox httpd serving /hello.txt (.ci/test-images.sh). */
export const CHALLENGE_IMAGE = "platform-test/challenge-page:1";
export const PAGE = "hello from a challenge behind the deployed master";

/** Which image is missing (and what makes it), or null. */
export function imagesMissing(): string | null {
  for (const image of [MASTER_IMAGE, POSTGRES_IMAGE, CHALLENGE_IMAGE]) {
    if (spawnSync("docker", ["image", "inspect", image]).status !== 0)
      return `${image} is missing (deploy/build-images.sh, .ci/test-images.sh)`;
  }
  return null;
}

export interface Run {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs a command to its end: its exit code, its output as bytes, its errors as text. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv, input?: Buffer) {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr }));
    child.stdin.end(input);
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** `attempt` until it resolves, once a second, or throw its last error after `timeoutMs`. */
export async function eventually<T>(what: string, timeoutMs: number, attempt: () => Promise<T>) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await attempt();
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`${what} within ${timeoutMs} ms; last: ${(last as Error)?.message ?? last}`);
}

/** The four secrets, fresh. The password has characters a URL must escape. */
export function freshSecrets() {
  return {
    admin_token: randomBytes(24).toString("hex"),
    master_key: randomBytes(32).toString("hex"),
    postgres_password: `p@ss:/${randomBytes(12).toString("hex")}?#%`,
    validator_hotkey: "{}",
  };
}

/**
 * A temporary directory holding `secrets/<name>` as docs/deploying.md makes them (directory
 * 0700, files 0444: the services run as their own uids, not the files' owner), and the
 * variables that point both files at them and at this engine's Docker socket group.
 */
export async function writeSecrets(prefix: string, secrets = freshSecrets()) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const secretsDir = join(dir, "secrets");
  mkdirSync(secretsDir, { mode: 0o700 });
  for (const [name, value] of Object.entries(secrets)) {
    writeFileSync(join(secretsDir, name), `${value}\n`);
    chmodSync(join(secretsDir, name), 0o444);
  }
  const gid = spawnSync("stat", ["-c", "%g", "/var/run/docker.sock"], { encoding: "utf8" });
  const env: NodeJS.ProcessEnv = {
    PLATFORM_SECRETS_DIR: secretsDir,
    PLATFORM_MASTER_IMAGE: MASTER_IMAGE,
    PLATFORM_POSTGRES_IMAGE: POSTGRES_IMAGE,
    DOCKER_GID: gid.stdout.trim(),
  };
  return { dir, secrets, env };
}

/**
 * The address of Docker's default bridge on this host (docker0), where `host.docker.internal`
 * (`host-gateway`) points inside the containers: a server in the test process bound there is
 * reachable from the deployment and from nothing outside this host. 0.0.0.0 without a docker0.
 */
export function dockerBridgeAddress(): string {
  const docker0 = networkInterfaces()["docker0"] ?? [];
  return docker0.find((address) => address.family === "IPv4")?.address ?? "0.0.0.0";
}
