// The challenge backend's settings and the Swarm service a challenge becomes: what the
// registry asks for, in the shape Swarm rolls and rolls back by itself.
import { describe, expect, it } from "vitest";
import { ConfigError, loadMasterConfig } from "../config.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import { MAX_REPLICAS, replicasOf, serviceSpec, specHash } from "./desired-state.js";
import { challengeServiceSpec } from "./swarm-service-spec.js";

const base = { ADMIN_TOKEN: "a".repeat(32) };
const reconciler = (env: Record<string, string> = {}) =>
  loadMasterConfig({}, { ...base, ...env }).reconciler;

describe("the challenge backend setting", () => {
  it("defaults to containers on the engine, reached by DNS on Swarm", () => {
    expect(reconciler()).toMatchObject({ backend: "engine", swarmAddress: "dns" });
    expect(
      reconciler({ PLATFORM_CHALLENGE_BACKEND: "swarm", PLATFORM_CHALLENGE_SWARM_ADDRESS: "task" }),
    ).toMatchObject({ backend: "swarm", swarmAddress: "task" });
  });

  it.each([
    [{ PLATFORM_CHALLENGE_BACKEND: "kubernetes" }, "PLATFORM_CHALLENGE_BACKEND"],
    [{ PLATFORM_CHALLENGE_SWARM_ADDRESS: "vip" }, "PLATFORM_CHALLENGE_SWARM_ADDRESS"],
    [
      { PLATFORM_CHALLENGE_BACKEND: "swarm", PLATFORM_RECONCILER: "false" },
      "PLATFORM_CHALLENGE_BACKEND",
    ],
  ])("refuses %o, naming %s", (env, variable) => {
    let error: unknown;
    try {
      reconciler(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(variable);
  });
});

const row = (metadata: Record<string, unknown> = {}) =>
  ({
    slug: "demo",
    image: "ghcr.io/demo:1",
    resources: {},
    volumes: {},
    env: {},
    secrets: {},
    metadata,
    challenge_token_salt: "c",
    broker_token_salt: "b",
  }) as unknown as ChallengeRow;

describe("replicas", () => {
  it("are 1 unless metadata.replicas says otherwise, and are part of the fingerprint", () => {
    expect(replicasOf(row())).toBe(1);
    expect(replicasOf(row({ replicas: 3 }))).toBe(3);
    const key = Buffer.alloc(32, 7);
    expect(specHash(serviceSpec(row(), "img@sha256:1"), key)).not.toBe(
      specHash(serviceSpec(row({ replicas: 2 }), "img@sha256:1"), key),
    );
  });

  it.each([0, -1, 1.5, "2", MAX_REPLICAS + 1])("refuses metadata.replicas %o", (replicas) => {
    expect(() => replicasOf(row({ replicas }))).toThrow(/metadata.replicas must be an integer/);
  });
});

/** The parts of a service spec the tests read. */
interface ServiceShape {
  EndpointSpec: unknown;
  UpdateConfig: unknown;
  RollbackConfig: unknown;
  Mode: unknown;
  TaskTemplate: {
    ContainerSpec: { Mounts: unknown[] };
    RestartPolicy: { Condition: string };
    Resources: { Limits: unknown };
    Placement: { Constraints: string[] };
    Networks: unknown;
  };
}

describe("challengeServiceSpec", () => {
  const spec = challengeServiceSpec({
    name: "platform-challenge-demo",
    image: "ghcr.io/demo@sha256:abc",
    env: { PORT: "8080", SECRET: "s" },
    labels: { "platform.spec": "f" },
    taskLabels: { "platform.runtime": "challenge-task" },
    network: "net-id",
    replicas: 2,
    volumes: [{ source: "platform-demo-data", target: "/data" }],
    resources: { cpus: 1.5, memory_mb: 512, gpus: 1 },
    nodeId: "node-1",
    monitorSeconds: 30,
  }) as unknown as ServiceShape;

  it("has no virtual IP and no published port, and rolls start-first with Swarm's rollback", () => {
    expect(spec.EndpointSpec).toEqual({ Mode: "dnsrr" });
    expect(spec.UpdateConfig).toEqual({
      Parallelism: 1,
      Order: "start-first",
      FailureAction: "rollback",
      Monitor: 30e9,
      MaxFailureRatio: 0,
    });
    expect(spec.RollbackConfig).toMatchObject({ Order: "start-first", FailureAction: "pause" });
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 2 } });
    expect(spec.TaskTemplate.RestartPolicy.Condition).toBe("any");
  });

  it("runs the container path's lock-down, environment, volumes and resources", () => {
    const container = spec.TaskTemplate.ContainerSpec;
    expect(container).toMatchObject({
      Image: "ghcr.io/demo@sha256:abc",
      Env: ["PORT=8080", "SECRET=s"],
      Init: true,
      CapabilityDrop: ["ALL"],
      Labels: { "platform.runtime": "challenge-task" },
    });
    expect(container.Mounts).toContainEqual({
      Type: "volume",
      Source: "platform-demo-data",
      Target: "/data",
    });
    expect(spec.TaskTemplate.Resources.Limits).toEqual({
      NanoCPUs: 1.5e9,
      MemoryBytes: 512 * 1024 * 1024,
      Pids: 4096,
    });
    // GPUs on GPU nodes; a challenge with volumes stays on the node that holds them.
    expect(spec.TaskTemplate.Placement.Constraints).toEqual([
      "node.labels.gpu==true",
      "node.id==node-1",
    ]);
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: "net-id" }]);
  });
});
