// The Swarm stack (deploy/docker-stack.yml), deployed with `docker stack deploy` on the one-node
// swarm CI runs: the master ready on its public port (host mode), its admin listener published on no
// port, and a challenge registered with the CLI inside the master's task answering through the
// proxy. Needs an active swarm and the images of deploy/build-images.sh; skipped loudly without
// them, and under CI it fails.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { isCi } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHALLENGE_IMAGE,
  DEPLOY,
  eventually,
  freePort,
  imagesMissing,
  PAGE,
  run,
  writeSecrets,
} from "./_deploy-test-kit.js";

function missing(): string | null {
  const state = spawnSync("docker", ["info", "--format", "{{.Swarm.LocalNodeState}}"], {
    encoding: "utf8",
  });
  if (state.status !== 0) return "no Docker engine answers";
  if (state.stdout.trim() !== "active") return "this engine is not in a swarm (.ci/run makes one)";
  return imagesMissing();
}

const why = missing();
if (why && !isCi()) {
  const bar = "!".repeat(78);
  console.warn(`\n${bar}\n!! the Swarm stack test SKIPPED: ${why}\n!! CI fails instead.\n${bar}\n`);
}

describe.skipIf(why !== null && !isCi())("the Swarm stack (deploy/docker-stack.yml)", () => {
  const id = randomBytes(4).toString("hex");
  const stack = `pdeploy${id}`;
  const slug = `stack-${id}`;
  const node = spawnSync("docker", ["info", "--format", "{{.Swarm.NodeID}}"], {
    encoding: "utf8",
  }).stdout.trim();
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let publicUrl: string;
  let labelled = false;

  const docker = async (args: string[]) => {
    const result = await run("docker", args, env);
    if (result.code !== 0)
      throw new Error(`docker ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
    return result.stdout.toString().trim();
  };
  const masterTask = () =>
    eventually("the master's task is running", 120_000, async () => {
      const ids = await docker([
        "ps",
        "-q",
        "--filter",
        `label=com.docker.swarm.service.name=${stack}_master`,
        "--filter",
        "status=running",
      ]);
      if (!ids) throw new Error("no running task");
      return ids.split("\n")[0] as string;
    });

  beforeAll(async () => {
    if (why) throw new Error(`CI but the Swarm stack cannot run: ${why}`);
    const secrets = await writeSecrets("platform-stack-");
    dir = secrets.dir;
    const publicPort = await freePort();
    publicUrl = `http://127.0.0.1:${publicPort}`;
    env = {
      ...process.env,
      ...secrets.env,
      PLATFORM_PUBLIC_PORT: String(publicPort),
      PLATFORM_DOCKER_NETWORK: `${stack}-platform`,
      PLATFORM_IMAGE_ALLOWLIST: "platform-test/",
    };
    // The stack places its data on a node labelled for it (deploy/README.md, "Swarm").
    const labels = await docker(["node", "inspect", node, "--format", "{{json .Spec.Labels}}"]);
    if (!JSON.parse(labels)?.["platform.data"]) {
      await docker(["node", "update", "--label-add", "platform.data=true", node]);
      labelled = true;
    }
    // Local images: no registry to resolve a digest from.
    await docker([
      "stack",
      "deploy",
      "--resolve-image",
      "never",
      "-c",
      join(DEPLOY, "docker-stack.yml"),
      stack,
    ]);
  }, 120_000);

  afterAll(async () => {
    if (!env) return;
    await run("docker", ["rm", "-f", `platform-challenge-${slug}`], env);
    await run("docker", ["stack", "rm", stack], env);
    // Volumes and networks go once the tasks' containers have.
    await eventually("the stack's containers are gone", 120_000, async () => {
      const left = await docker([
        "ps",
        "-aq",
        "--filter",
        `label=com.docker.stack.namespace=${stack}`,
      ]);
      if (left) throw new Error(left);
    }).catch(() => {});
    for (const volume of ["pgdata", "backups", "master-data", "validator-data"])
      await run("docker", ["volume", "rm", `${stack}_${volume}`], env);
    await eventually("the stack's networks are gone", 60_000, async () => {
      const left = await docker(["network", "ls", "-q", "--filter", `name=${stack}`]);
      if (left) {
        await run("docker", ["network", "rm", ...left.split("\n")], env);
        throw new Error(left);
      }
    }).catch(() => {});
    if (labelled) await run("docker", ["node", "update", "--label-rm", "platform.data", node], env);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it("runs the master, ready on its public port, with no admin port published", async () => {
    await eventually("the master's /readyz answered 200", 240_000, async () => {
      const response = await fetch(`${publicUrl}/readyz`);
      if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`);
    }).catch(async (error: Error) => {
      const ps = await run("docker", ["stack", "ps", "--no-trunc", stack], env);
      throw new Error(`${error.message}\n${ps.stdout.toString()}`);
    });
    const ports = JSON.parse(
      await docker([
        "service",
        "inspect",
        `${stack}_master`,
        "--format",
        "{{json .Endpoint.Ports}}",
      ]),
    ) as { TargetPort: number }[];
    expect(ports.map((p) => p.TargetPort)).toEqual([8080]);
    const validator = await docker([
      "service",
      "inspect",
      `${stack}_validator`,
      "--format",
      "{{.Spec.Mode.Replicated.Replicas}}",
    ]);
    expect(validator).toBe("0");
  }, 300_000);

  it("serves a challenge registered with the CLI in the master's task", async () => {
    const task = await masterTask();
    const cli = (args: string[]) => docker(["exec", task, "platform", "challenge", ...args]);
    expect(await cli(["register", slug, CHALLENGE_IMAGE, "10", "--name", "Stack test"])).toMatch(
      /registered/,
    );
    await cli(["activate", slug]);
    await cli(["restart", slug]);
    const body = await eventually("the challenge answered through the proxy", 60_000, async () => {
      const response = await fetch(`${publicUrl}/challenges/${slug}/hello.txt`);
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${response.status} ${text}`);
      return text;
    });
    expect(body).toBe(`${PAGE}\n`);
  }, 240_000);
});
