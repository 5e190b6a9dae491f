import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { resolveTaskLimits } from "@platform/challenge-sdk/sandbox";
import type { BrokerRunResponse } from "@platform/core";
import { testBackends } from "@platform/core/testing";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokerOf } from "../../src/broker/broker-routes.js";
import { swarmServiceSpec } from "../../src/broker/swarm-executor.js";
import { jsonInit, startTestMaster, type TestMaster } from "../test-master.js";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  eventually,
  executorsUnderTest,
  IMAGES,
  leftoversOf,
  runPlain,
  type TestChallenge,
} from "./docker-test-env.js";

const env = await dockerForTests();
const executors = await executorsUnderTest();
// The behaviour of a workload does not depend on the database: one backend is enough here
// (the API suite runs the quota and ownership rules on both).
const [backend] = await testBackends();

const b64 = (text: string) => Buffer.from(text).toString("base64");

// A node of a swarm gives a service's mounts to its engine as they are: the same mount objects,
// created here on this engine, show what every node makes of them (this machine need not be a
// swarm manager for that part of the swarm backend to be checked).
describe.skipIf(!env)("the swarm service spec's mounts, on an engine", () => {
  it("make /dev/shm read-only, /tmp and the image's other VOLUMEs writable tmpfs", async () => {
    const docker = env?.docker as Docker;
    const service = swarmServiceSpec(
      {
        name: "shm-probe",
        slug: "shm",
        jobId: "shm",
        masterId: "test",
        image: IMAGES.busybox,
        workdir: "/",
        env: {},
        labels: {},
        user: "65534:65534",
        limits: resolveTaskLimits(undefined),
        files: [],
        imageVolumes: ["/dev/shm", "/tmp/", "/data"],
        gpus: 0,
        gpuDevices: [],
        timeoutSeconds: 30,
        init: true,
        deadline: 0,
      },
      "none",
      [],
    );
    const template = service.TaskTemplate as { ContainerSpec?: Docker.ContainerSpec };
    const mounts = template.ContainerSpec?.Mounts ?? [];
    expect(mounts.map((mount) => mount.Target)).toEqual(["/tmp", "/data", "/dev/shm"]);
    const container = await docker.createContainer({
      Image: IMAGES.busybox,
      User: "65534:65534",
      Cmd: [
        "sh",
        "-c",
        [
          "echo data > /dev/shm/x 2>/dev/null && echo shm=writable || echo shm=readonly",
          "echo data > /tmp/x && echo tmp=writable || echo tmp=readonly",
          "echo data > /data/x && echo data=writable || echo data=readonly",
        ].join("; "),
      ],
      Labels: { "platform.test": "swarm-mounts" },
      HostConfig: {
        NetworkMode: "none",
        ReadonlyRootfs: true,
        CapDrop: ["ALL"],
        Mounts: mounts as Docker.MountConfig,
      },
    });
    try {
      await container.start();
      await container.wait();
      const output = (await container.logs({ stdout: true, stderr: true })).toString();
      expect(output).toContain("shm=readonly");
      expect(output).toContain("tmp=writable");
      expect(output).toContain("data=writable");
    } finally {
      await container.remove({ force: true });
    }
  });
});

describe.skipIf(!env).each(executors)("broker runs on the %s backend", (executor) => {
  const docker = env?.docker as Docker;
  let t: TestMaster;
  let base: string;
  let challenge: TestChallenge;
  let masterId: string;

  beforeAll(async () => {
    t = await startTestMaster(backend!, brokerTestConfig(executor));
    base = (await t.listen()).admin.url;
    challenge = await createChallenge(t, `runs-${executor}`);
    masterId = await brokerOf(t.master.context)!.ledger.instanceId();
  });
  afterAll(async () => {
    await t?.close();
    if (t) expect(await leftoversOf(docker, masterId, executor === "swarm")).toEqual([]);
  });

  const run = async (body: Record<string, unknown>) => {
    const res = await fetch(
      `${base}/v1/docker/run`,
      jsonInit("POST", { image: IMAGES.busybox, timeout_seconds: 60, ...body }, challenge.headers),
    );
    return {
      status: res.status,
      body: (await res.json()) as BrokerRunResponse & { code?: string; detail?: string },
    };
  };
  const sh = (job: string, script: string, extra: Record<string, unknown> = {}) =>
    run({ job_id: job, command: ["sh", "-c", script], ...extra });

  it("captures stdout and stderr separately, with the exit code, and removes the container", async () => {
    const { status, body } = await sh("exit-3", "echo hello out; echo hello err >&2; exit 3");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      stdout: "hello out\n",
      stderr: "hello err\n",
      returncode: 3,
      timed_out: false,
      oom_killed: false,
    });
    expect(body).toMatchObject({ stdout_truncated: false, stderr_truncated: false });
    expect(body.container_name).toMatch(
      new RegExp(`^platform-runs-${executor}-exit-3-[0-9a-f]{8}$`),
    );
    expect(body.duration_ms).toBeGreaterThan(0);
    const zero = await sh("exit-0", "printf ok");
    expect(zero.body).toMatchObject({ stdout: "ok", stderr: "", returncode: 0 });
    expect(await leftoversOf(docker, masterId, executor === "swarm")).toEqual([]);
    const rows = await t.master.database
      .sql`select status, returncode from broker_runs where container_name = ${body.container_name}`;
    expect(rows[0]).toMatchObject({ status: "exited", returncode: 3 });
  });

  describe("the sandbox, probed from inside", () => {
    let probe: BrokerRunResponse;
    beforeAll(async () => {
      const script = [
        "echo id=$(id -u):$(id -g)",
        "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status",
        "echo ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ,)",
        "echo routes=$(ip route 2>/dev/null | grep -c default)",
        "touch /rootfs-write 2>/dev/null && echo root=writable || echo root=readonly",
        "echo data > /dev/shm/x 2>/dev/null && echo shm=writable || echo shm=readonly",
        "mkdir /dev/shm/d 2>/dev/null && echo shm-dir=created || echo shm-dir=refused",
        "echo data > /tmp/x && echo tmp=writable || echo tmp=readonly",
        "printf '#!/bin/sh\\necho ran\\n' > /tmp/s.sh; chmod +x /tmp/s.sh; /tmp/s.sh 2>/dev/null && echo tmp=exec || echo tmp=noexec",
        "echo files=$(cat /workspace/in/hello.txt)",
        "echo workspace-exec=$(/workspace/bin/run.sh)",
        "touch /workspace/new 2>/dev/null && echo workspace=writable || echo workspace=readonly",
        "echo pwd=$(pwd)",
        "echo env=$GREETING",
      ].join("; ");
      const { status, body } = await sh("probe", script, {
        env: { GREETING: "hi there" },
        files: [
          { path: "in/hello.txt", content_base64: b64("hello file") },
          {
            path: "bin/run.sh",
            content_base64: b64("#!/bin/sh\necho from-workspace\n"),
            mode: 0o755,
          },
        ],
      });
      expect(status).toBe(200);
      probe = body;
    });

    it("runs as nobody (65534) when the image would run as root", () =>
      expect(probe.stdout).toContain("id=65534:65534"));
    it("has no capabilities", () => {
      expect(probe.stdout).toMatch(/CapEff:\s+0000000000000000/);
      expect(probe.stdout).toMatch(/CapBnd:\s+0000000000000000/);
    });
    // Swarm services cannot set no-new-privileges; with no capability at all there is nothing
    // a setuid binary could gain, and the image's files are never setuid-writable by the task.
    it.skipIf(executor !== "engine")("has no-new-privileges (plain engine only)", () =>
      expect(probe.stdout).toMatch(/NoNewPrivs:\s+1/),
    );
    if (executor === "engine") {
      it("has no network: loopback only, no route", () => {
        expect(probe.stdout).toContain("ifaces=lo,");
        expect(probe.stdout).toContain("routes=0");
      });
    } else {
      it("has no route out (its own internal overlay network, nobody else on it)", () =>
        expect(probe.stdout).toContain("routes=0"));
    }
    it("has a read-only root filesystem", () => expect(probe.stdout).toContain("root=readonly"));
    it("has a read-only /dev/shm: /tmp is the one writable place", () => {
      expect(probe.stdout).toContain("shm=readonly");
      expect(probe.stdout).toContain("shm-dir=refused");
    });
    it("has a writable /tmp where nothing executes", () => {
      expect(probe.stdout).toContain("tmp=writable");
      expect(probe.stdout).toContain("tmp=noexec");
    });
    it("places the files under /workspace, read-only and executable", () => {
      expect(probe.stdout).toContain("files=hello file");
      expect(probe.stdout).toContain("workspace-exec=from-workspace");
      expect(probe.stdout).toContain("workspace=readonly");
      expect(probe.stdout).toContain("pwd=/workspace");
    });
    it("passes the environment", () => expect(probe.stdout).toContain("env=hi there"));
  });

  it("runs the command under Docker's init by default, and as PID 1 itself with init: false", async () => {
    const probe = "echo pid=$$; tr '\\0' ' ' < /proc/1/cmdline; echo";
    const withInit = await sh("with-init", probe);
    expect(withInit.status).toBe(200);
    expect(withInit.body.stdout).not.toMatch(/^pid=1$/m);
    expect(withInit.body.stdout).toContain("init");
    const own = await sh("own-init", probe, { init: false });
    expect(own.status).toBe(200);
    expect(own.body.stdout.split("\n").slice(0, 2)).toEqual([
      "pid=1",
      expect.stringContaining("sh -c"),
    ]);
  });

  it("cannot reach a server the host offers on the Docker bridge, which a plain container can", async () => {
    const server: Server = createServer((socket) => socket.end("reached\n"));
    server.listen(0, "0.0.0.0");
    await once(server, "listening");
    const port = (server.address() as { port: number }).port;
    try {
      // Control: an unhardened container reaches the host through its gateway: the attack works.
      const control = await runPlain(
        docker,
        `gw=$(ip route | awk '/default/ {print $3}'); echo gw=$gw; nc -w 2 $gw ${port} </dev/null`,
      );
      expect(control).toContain("reached");
      const gateway = /gw=(\S+)/.exec(control)?.[1];
      const attempt = `nc -w 2 ${gateway} ${port} </dev/null 2>&1; echo rc=$?`;
      const { body } = await sh("escape", attempt);
      expect(body.stdout).not.toContain("reached");
      expect(body.stdout).toMatch(/rc=[1-9]/);
    } finally {
      server.close();
    }
  });

  it("kills a run at its timeout, answers timed_out and leaves nothing behind", async () => {
    const started = Date.now();
    const { status, body } = await sh("sleepy", "echo started; sleep 60", { timeout_seconds: 2 });
    expect(status).toBe(200);
    expect(body).toMatchObject({ timed_out: true, returncode: null, oom_killed: false });
    // Killed at its timeout, long before the 60 s its command sleeps.
    expect(Date.now() - started).toBeLessThan(60_000 / 4);
    if (executor === "engine") expect(body.stdout).toBe("started\n");
    expect(await leftoversOf(docker, masterId, executor === "swarm")).toEqual([]);
    const [row] = await t.master.database
      .sql`select status from broker_runs where container_name = ${body.container_name}`;
    expect(row).toMatchObject({ status: "timed_out" });
  });

  it("reports an out-of-memory kill", async () => {
    const { status, body } = await run({
      job_id: "hog",
      image: IMAGES.memhog,
      limits: { memory_mb: 32 },
    });
    expect(status).toBe(200);
    expect(body.oom_killed).toBe(true);
    expect(body.returncode).not.toBe(0);
  });

  it("cuts output at limits.output_bytes and says so, per stream", async () => {
    const { body } = await sh("chatty", "yes abcdefghij | head -c 5000; echo short >&2", {
      limits: { output_bytes: 1024 },
    });
    expect(body.stdout).toHaveLength(1024);
    expect(body.stdout_truncated).toBe(true);
    expect(body.stderr).toBe("short\n");
    expect(body.stderr_truncated).toBe(false);
    expect(body.returncode).toBe(0);
  });

  it("keeps the user of an image that is not root", async () => {
    const { body } = await sh("nonroot", "id -u", { image: IMAGES.nonroot });
    expect(body.stdout).toBe("1000\n");
    const asked = await sh("asked-user", "id -u", { user: "4242:4242" });
    expect(asked.body.stdout).toBe("4242\n");
  });

  it("never runs with group 0: a bare uid, asked or from the image, gets its own number as gid", async () => {
    // Issue 10 item 3: `"user": "4242"` ran as uid=4242 gid=0(root), and so did `USER 4242`.
    const asked = await sh("bare-uid", "echo $(id -u):$(id -g):$(id -G)", { user: "4242" });
    expect(asked.status).toBe(200);
    expect(asked.body.stdout).toBe("4242:4242:4242\n");
    const image = await sh("image-uid", "echo $(id -u):$(id -g):$(id -G)", {
      image: IMAGES.uidOnly,
    });
    expect(image.status).toBe(200);
    expect(image.body.stdout).toBe("4242:4242:4242\n");
  });

  it("applies the hardened configuration and the limits (as Docker records them)", async () => {
    const pending = sh("inspected", "sleep 20", {
      limits: { cpus: 1.5, memory_mb: 256, pids: 64 },
    });
    const broker = brokerOf(t.master.context)!;
    let name = "";
    await eventually(
      async () => {
        const [row] = await t.master.database.sql<{ container_name: string }[]>`
        select container_name from broker_runs where job_id = 'inspected' and ended_at is null`;
        name = row?.container_name ?? "";
        return (
          name !== "" &&
          (await broker.list(challenge.slug, "inspected")).some((w) => w.state === "running")
        );
      },
      20_000,
      "the inspected workload to run",
    );
    if (executor === "engine") {
      const info = await docker.getContainer(name).inspect();
      expect(info.HostConfig).toMatchObject({
        NetworkMode: "none",
        ReadonlyRootfs: true,
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges:true"],
        Init: true,
        Privileged: false,
        PidsLimit: 64,
        Memory: 256 * 1024 * 1024,
        MemorySwap: 256 * 1024 * 1024,
        NanoCpus: 1_500_000_000,
      });
      expect(info.HostConfig.Tmpfs?.["/tmp"]).toMatch(/noexec/);
      expect(info.HostConfig.Tmpfs?.["/dev/shm"]).toMatch(/^ro,/);
      expect(info.Config.User).toBe("65534:65534");
      expect(info.Config.Labels).toMatchObject({
        "platform.managed": "true",
        "platform.challenge": challenge.slug,
        "platform.job": "inspected",
        "platform.master": masterId,
      });
      expect(Number(info.Config.Labels["platform.deadline"])).toBeGreaterThan(Date.now() / 1000);
    } else {
      const info = (await docker.getService(name).inspect()) as {
        Spec: {
          Mode: unknown;
          TaskTemplate: {
            ContainerSpec: Record<string, unknown>;
            Resources: { Limits: Record<string, number> };
            RestartPolicy: unknown;
          };
        };
      };
      expect(info.Spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
      expect(info.Spec.TaskTemplate.ContainerSpec).toMatchObject({
        ReadOnly: true,
        Init: true,
        CapabilityDrop: ["ALL"],
        User: "65534:65534",
      });
      expect(info.Spec.TaskTemplate.ContainerSpec["Mounts"]).toContainEqual(
        expect.objectContaining({ Type: "tmpfs", Target: "/dev/shm", ReadOnly: true }),
      );
      expect(info.Spec.TaskTemplate.RestartPolicy).toMatchObject({ Condition: "none" });
      expect(info.Spec.TaskTemplate.Resources.Limits).toMatchObject({
        NanoCPUs: 1_500_000_000,
        MemoryBytes: 256 * 1024 * 1024,
        Pids: 64,
      });
    }
    const cleaned = await fetch(
      `${base}/v1/docker/cleanup`,
      jsonInit("POST", { job_id: "inspected" }, challenge.headers),
    );
    expect(await cleaned.json()).toEqual({ status: "ok", removed: [name] });
    const answer = await pending;
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe("workload_removed");
  });
});
