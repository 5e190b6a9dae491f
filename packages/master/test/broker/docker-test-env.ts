import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PLATFORM_LABELS, probeDocker } from "@platform/challenge-sdk/sandbox";
import { isCi } from "@platform/core/testing";
import Docker from "dockerode";
import { expect } from "vitest";
import type { MasterConfig } from "../../src/config.js";
import { jsonInit, type TestMaster } from "../test-master.js";

/** The images .ci/test-images.sh builds (no registry involved). */
export const IMAGES = {
  busybox: "platform-test/busybox:1",
  nonroot: "platform-test/nonroot:1",
  uidOnly: "platform-test/uid-only:1",
  memhog: "platform-test/memhog:1",
  challenge: "platform-test/challenge:1",
  challengeHealthcheck: "platform-test/challenge-healthcheck:1",
} as const;

const script = fileURLToPath(new URL("../../../../.ci/test-images.sh", import.meta.url));
const ci = isCi();
let ready: Promise<{ docker: Docker; swarm: boolean } | null> | undefined;

function skipLoudly(reason: string): null {
  const bar = "!".repeat(78);
  console.warn(
    `\n${bar}\n!! Docker broker/runtime tests SKIPPED: ${reason}\n!! Start an engine (bash .ci/docker-engine.sh); CI=true makes this an error.\n${bar}\n`,
  );
  return null;
}

async function prepare(): Promise<{ docker: Docker; swarm: boolean } | null> {
  const docker = new Docker();
  const probe = await probeDocker(docker);
  if (!probe.ok) {
    if (ci) throw new Error(`CI=true but no Docker engine answers: ${probe.reason}`);
    return skipLoudly(`no Docker engine answers (${probe.reason})`);
  }
  let swarm = probe.facts.swarmManager;
  if (!swarm && ci) {
    // Only under CI: joining a swarm changes nothing for plain containers, but it is the machine's.
    execFileSync("docker", ["swarm", "init", "--advertise-addr", "127.0.0.1"], { stdio: "ignore" });
    swarm = true;
  }
  const missing = [];
  for (const image of Object.values(IMAGES)) {
    try {
      await docker.getImage(image).inspect();
    } catch {
      missing.push(image);
    }
  }
  if (missing.length) execFileSync("bash", [script], { stdio: "inherit" });
  return { docker, swarm };
}

/**
 * The Docker engine the suites run against, with the test images built, or null (after a loud
 * warning) when none answers. Under CI=true a missing engine throws: CI never skips silently.
 */
export function dockerForTests(): Promise<{ docker: Docker; swarm: boolean } | null> {
  ready ??= prepare();
  return ready;
}

/** The executors to parameterise a suite over: the engine, and swarm when the node manages one. */
export async function executorsUnderTest(): Promise<("engine" | "swarm")[]> {
  const env = await dockerForTests();
  if (!env) return [];
  if (!env.swarm)
    console.warn(
      "!! Docker swarm backend tests SKIPPED: this engine is not a swarm manager (CI=true runs `docker swarm init`)",
    );
  return env.swarm ? ["engine", "swarm"] : ["engine"];
}

/** Broker settings every suite starts from: local test images, a reaper driven by the test. */
export function brokerTestConfig(
  executor: "engine" | "swarm",
  extra: (config: MasterConfig) => void = () => {},
) {
  return (config: MasterConfig) => {
    config.broker.backend = executor;
    config.broker.allowedImagePrefixes = ["platform-test/"];
    config.broker.reaperIntervalSeconds = 0;
    config.broker.gpuHost = false;
    config.imagePolicy = {
      allowedPrefixes: ["platform-test/", "ghcr.io/"],
      requireTagOrDigest: true,
      forbidLatest: true,
    };
    extra(config);
  };
}

/** A registered challenge and its clear broker token. */
export interface TestChallenge {
  slug: string;
  token: string;
  challengeToken: string;
  /** Headers that authorise the broker for this challenge. */
  headers: Record<string, string>;
}

/** Register a challenge through the admin API. */
export async function createChallenge(
  t: TestMaster,
  slug: string,
  extra: Record<string, unknown> = {},
): Promise<TestChallenge> {
  const res = await t.fetch(
    "/v1/admin/challenges",
    jsonInit(
      "POST",
      { slug, name: slug, image: IMAGES.challenge, version: "1", status: "active", ...extra },
      t.admin,
    ),
  );
  expect(res.status).toBe(201);
  const body = (await res.json()) as { docker_broker_token: string; challenge_token: string };
  return {
    slug,
    token: body.docker_broker_token,
    challengeToken: body.challenge_token,
    headers: {
      authorization: `Bearer ${body.docker_broker_token}`,
      "x-platform-challenge-slug": slug,
    },
  };
}

/** Everything Docker holds that carries `masterId`'s label (what must be empty after a suite). */
export async function leftoversOf(
  docker: Docker,
  masterId: string,
  swarm: boolean,
): Promise<string[]> {
  const label = [`${PLATFORM_LABELS.master}=${masterId}`];
  const out: string[] = [];
  for (const c of await docker.listContainers({ all: true, filters: { label } }))
    out.push(`container ${c.Names[0]}`);
  for (const v of (await docker.listVolumes({ filters: { label } })).Volumes ?? [])
    out.push(`volume ${v.Name}`);
  for (const n of await docker.listNetworks({ filters: { label } })) out.push(`network ${n.Name}`);
  if (swarm) {
    for (const s of (await docker.listServices({ filters: { label } })) as unknown as {
      Spec?: { Name?: string };
    }[])
      out.push(`service ${s.Spec?.Name}`);
    for (const c of (await docker.listConfigs({ filters: { label } })) as unknown as {
      Spec?: { Name?: string };
    }[])
      out.push(`config ${c.Spec?.Name}`);
  }
  return out;
}

/** Run `script` in a plain, unhardened container on the default bridge; its combined output. */
export async function runPlain(docker: Docker, script: string): Promise<string> {
  const container = await docker.createContainer({
    Image: IMAGES.busybox,
    Cmd: ["sh", "-c", script],
    Labels: { "platform.test": "control" },
  });
  try {
    await container.start();
    await container.wait();
    return (await container.logs({ stdout: true, stderr: true })).toString();
  } finally {
    await container.remove({ force: true });
  }
}

/** Wait until `check` is true (polling), or fail after `timeoutMs`. */
export async function eventually(
  check: () => Promise<boolean>,
  timeoutMs = 15_000,
  what = "condition",
): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
