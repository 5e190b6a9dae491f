import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isCi } from "@platform/core/testing";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DOCKER_RUNNER_LABEL,
  dockerTaskRunner,
  type Task,
  TaskAbortedError,
  type TaskEvent,
  TaskRejectedError,
  taskFile,
} from "../../src/tasks/index.js";

const IMAGE = "platform-test/busybox:1";
const NONROOT = "platform-test/nonroot:1";
const MEMHOG = "platform-test/memhog:1";
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/** Does an engine answer? Under CI=true it must; elsewhere its absence skips the suite loudly. */
async function engineAnswers(docker: Docker): Promise<boolean> {
  try {
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("no answer within 3 s")), 3_000),
      ),
    ]);
    return true;
  } catch (error) {
    const reason = (error as Error).message;
    if (isCi()) throw new Error(`CI is set but no Docker engine answers: ${reason}`);
    const bar = "!".repeat(78);
    console.warn(
      `\n${bar}\n!! dockerTaskRunner tests SKIPPED: no Docker engine answers (${reason}).\n!! Run .ci/docker-engine.sh; CI=true makes this an error.\n${bar}\n`,
    );
    return false;
  }
}

/** The test images come from .ci/test-images.sh (docker import, no registry), built once. */
function ensureTestImages(): void {
  const missing = [IMAGE, NONROOT, MEMHOG].some((image) => {
    try {
      execFileSync("docker", ["image", "inspect", image], { stdio: "ignore" });
      return false;
    } catch {
      return true;
    }
  });
  if (!missing) return;
  const script = `${repoRoot}.ci/test-images.sh`;
  if (!existsSync(script)) throw new Error(`Test images are missing and ${script} does not exist`);
  execFileSync("bash", [script], { stdio: "inherit" });
}

const docker = new Docker();
const available = await engineAnswers(docker);

describe.skipIf(!available)("dockerTaskRunner on the real engine", () => {
  // Every container and volume of this run carries this label, so afterAll can prove none leaked.
  const run = `r${randomBytes(4).toString("hex")}`;
  const runner = dockerTaskRunner({ docker, pull: false });
  let seq = 0;
  const task = (command: string[], extra: Partial<Task> = {}): Task => ({
    jobId: `sdk-test-${run}-${++seq}`,
    image: IMAGE,
    command,
    labels: { "sdk-test-run": run },
    timeoutSeconds: 60,
    ...extra,
  });
  const sh = (script: string, extra: Partial<Task> = {}) => task(["sh", "-c", script], extra);

  beforeAll(() => ensureTestImages(), 300_000);
  afterAll(async () => {
    const filters = { label: [`sdk-test-run=${run}`] };
    const containers = await docker.listContainers({ all: true, filters });
    const { Volumes } = await docker.listVolumes({ filters });
    for (const c of containers)
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {});
    for (const v of Volumes ?? [])
      await docker
        .getVolume(v.Name)
        .remove()
        .catch(() => {});
    expect(containers.map((c) => c.Names[0])).toEqual([]);
    expect((Volumes ?? []).map((v) => v.Name)).toEqual([]);
  });

  it("returns output and exit code, with events in order", async () => {
    const events: TaskEvent[] = [];
    const result = await runner.run(sh("echo hello; echo oops >&2; echo bye"), {
      onEvent: (e) => events.push(e),
    });
    expect(result).toMatchObject({
      stdout: "hello\nbye\n",
      stderr: "oops\n",
      exitCode: 0,
      timedOut: false,
      oomKilled: false,
      stdoutTruncated: false,
      stderrTruncated: false,
    });
    expect(result.containerName).toMatch(
      new RegExp(`^platform-task-sdk-test-${run}-\\d+-[0-9a-f]{8}$`),
    );
    expect(events[0]?.type).toBe("queued");
    expect(events[1]).toMatchObject({ type: "started", containerName: result.containerName });
    expect(events.at(-1)).toMatchObject({
      type: "finished",
      exitCode: 0,
      timedOut: false,
      containerName: result.containerName,
    });
    const logs = events.filter((e) => e.type === "log").map((e) => `${e.stream}:${e.line}`);
    expect(logs.filter((l) => l.startsWith("stdout"))).toEqual(["stdout:hello", "stdout:bye"]);
    expect(logs.filter((l) => l.startsWith("stderr"))).toEqual(["stderr:oops"]);
    expect(events.slice(2, -1).every((e) => e.type === "log")).toBe(true);
  });

  it("streams log lines live, as the task writes them", async () => {
    const events: { event: TaskEvent; at: number }[] = [];
    await runner.run(sh("for i in 1 2 3; do echo line$i; sleep 0.4; done"), {
      onEvent: (event) => events.push({ event, at: Date.now() }),
    });
    const lines = events.filter((e) => e.event.type === "log");
    expect(lines.map((e) => (e.event.type === "log" ? e.event.line : ""))).toEqual([
      "line1",
      "line2",
      "line3",
    ]);
    const finished = events.at(-1)!;
    // line1 reached us well before the task ended, not in one batch at the end.
    expect(finished.at - lines[0]!.at).toBeGreaterThanOrEqual(700);
  });

  it("reports a non-zero exit", async () => {
    const result = await runner.run(sh("echo failing >&2; exit 7"));
    expect(result).toMatchObject({ exitCode: 7, stderr: "failing\n", timedOut: false });
  });

  it("kills and removes a task past its timeout", async () => {
    const started = Date.now();
    const events: TaskEvent[] = [];
    const result = await runner.run(sh("echo before; sleep 60", { timeoutSeconds: 1 }), {
      onEvent: (e) => events.push(e),
    });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, stdout: "before\n" });
    // Killed at its 1 s timeout, long before the 60 s its command sleeps.
    expect(Date.now() - started).toBeLessThan(60_000 / 4);
    expect(events.at(-1)).toMatchObject({ type: "finished", timedOut: true, exitCode: null });
  });

  it("places files read-only under /workspace, owned by root, as the working directory", async () => {
    const result = await runner.run(
      task(["sh", "run.sh"], {
        files: [
          taskFile(
            "run.sh",
            'pwd; cat data/input.txt; ls -ln data | tail -n 1; echo x > data/new 2>&1 || echo "write refused"\n',
          ),
          taskFile("data/input.txt", "from the challenge\n"),
        ],
      }),
    );
    expect(result.exitCode).toBe(0);
    const [pwd, content, listing, write] = result.stdout.trim().split("\n");
    expect(pwd).toBe("/workspace");
    expect(content).toBe("from the challenge");
    expect(listing).toMatch(/^-rw-r--r--\s+1 0\s+0\s+19 .* input\.txt$/);
    expect(write).toBe("write refused");
    expect(result.stderr).toMatch(/Read-only file system/);
  });

  it("has no network, a read-only root and /dev/shm, a noexec /tmp, no capabilities and no new privileges", async () => {
    const result = await runner.run(
      sh(
        [
          "ls /sys/class/net",
          "touch /root-write 2>/dev/null && echo root-writable || echo root-readonly",
          "echo ok > /dev/shm/scratch 2>/dev/null && echo shm-writable || echo shm-readonly",
          "mkdir /dev/shm/d 2>/dev/null && echo shm-mkdir || echo shm-no-mkdir",
          "echo ok > /tmp/scratch && echo tmp-writable",
          "cp /bin/busybox /tmp/bb && (/tmp/bb true 2>/dev/null && echo tmp-exec || echo tmp-noexec)",
          "grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status",
          "wget -q -T 2 -O /dev/null http://1.1.1.1/ 2>/dev/null && echo online || echo offline",
          "id -u; id -g",
        ].join("; "),
      ),
    );
    expect(result.stdout.trim().split("\n")).toEqual([
      "lo",
      "root-readonly",
      "shm-readonly",
      "shm-no-mkdir",
      "tmp-writable",
      "tmp-noexec",
      "CapPrm:\t0000000000000000",
      "CapEff:\t0000000000000000",
      "NoNewPrivs:\t1",
      "offline",
      "65534",
      "65534",
    ]);
  });

  // With Docker's init as PID 1, every process of the task's uid can read init's environment
  // and reach the container's stdout through /proc/1; `init: false` puts the command there.
  it("runs the command under Docker's init by default, and as PID 1 itself with init: false", async () => {
    const probe = "echo pid=$$; tr '\\0' ' ' < /proc/1/cmdline; echo";
    const withInit = await runner.run(sh(probe));
    expect(withInit.stdout).not.toContain("pid=1\n");
    expect(withInit.stdout).toContain("init");
    const own = await runner.run(sh(probe, { init: false }));
    expect(own.stdout.split("\n")[0]).toBe("pid=1");
    expect(own.stdout.split("\n")[1]).toContain("sh -c");
  });

  it("keeps a non-root image's own user", async () => {
    const result = await runner.run(task(["id", "-u"], { image: NONROOT }));
    expect(result.stdout).toBe("1000\n");
  });

  it("applies the pids and memory caps, and a task may lower them", async () => {
    const read =
      "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max";
    const defaults = await runner.run(sh(read));
    expect(defaults.stdout.trim().split("\n")).toEqual(["512", String(4096 * 1024 * 1024)]);
    const lowered = await runner.run(sh(read, { limits: { pids: 64, memoryMb: 128 } }));
    expect(lowered.stdout.trim().split("\n")).toEqual(["64", String(128 * 1024 * 1024)]);
    const raised = await runner.run(sh(read, { limits: { pids: 4096 } })).catch((e: unknown) => e);
    expect(raised).toMatchObject({ code: "limit_exceeded", retryable: false });
  });

  it("reports an out-of-memory kill", async () => {
    const result = await runner.run(
      task([], {
        image: MEMHOG,
        command: undefined,
        limits: { memoryMb: 32 },
        timeoutSeconds: 60,
      }),
    );
    expect(result).toMatchObject({ oomKilled: true, timedOut: false });
    expect(result.exitCode).not.toBe(0);
  });

  it("caps the output it keeps, reading and dropping the rest", async () => {
    const result = await runner.run(
      sh("yes 0123456789 | head -c 200000; echo done >&2", { limits: { outputBytes: 2048 } }),
    );
    expect(result).toMatchObject({
      exitCode: 0,
      stdoutTruncated: true,
      stderrTruncated: false,
      stderr: "done\n",
    });
    expect(result.stdout).toHaveLength(2048);
  });

  it("aborting kills and removes the container and rejects TaskAbortedError", async () => {
    const abort = new AbortController();
    const events: TaskEvent[] = [];
    const running = runner.run(sh("echo up; sleep 60"), {
      signal: abort.signal,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "log") abort.abort();
      },
    });
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAbortedError);
    const name = (events.find((e) => e.type === "started") as { containerName: string })
      .containerName;
    await expect(docker.getContainer(name).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(events.some((e) => e.type === "finished")).toBe(false);
  });

  it("refuses GPUs clearly when the engine has no nvidia runtime", async () => {
    const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
    if (Object.keys(info.Runtimes ?? {}).includes("nvidia")) return; // a GPU host: nothing to refuse
    const error = await runner.run(task(["true"], { gpus: 1 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskRejectedError);
    expect(error).toMatchObject({ code: "gpu_unavailable", retryable: false });
  });

  it("refuses an image that is not on the engine when pulling is off, and a bad task before Docker", async () => {
    const missing = await runner
      .run(task(["true"], { image: `platform-test/absent-${run}:1` }))
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: "image_unavailable", retryable: false });
    const weakened = await runner
      .run({ ...task(["true"]), network: "host" } as Task)
      .catch((e: unknown) => e);
    expect(weakened).toMatchObject({ code: "weakening_refused" });
    const escaping = await runner
      .run(task(["true"], { files: [taskFile("../../etc/cron.d/x", "evil")] }))
      .catch((e: unknown) => e);
    expect(escaping).toMatchObject({ code: "invalid_file" });
  });

  it("reaps a container a crashed process left past its deadline, and only that", async () => {
    const labels = {
      "sdk-test-run": run,
      "platform.managed": "true",
      "platform.runner": DOCKER_RUNNER_LABEL,
    };
    const overdue = await docker.createContainer({
      name: `platform-task-reap-${run}-old`,
      Image: IMAGE,
      Cmd: ["true"],
      Labels: { ...labels, "platform.deadline": String(Math.floor(Date.now() / 1000) - 3600) },
    });
    const current = await docker.createContainer({
      name: `platform-task-reap-${run}-new`,
      Image: IMAGE,
      Cmd: ["true"],
      Labels: { ...labels, "platform.deadline": String(Math.floor(Date.now() / 1000) + 3600) },
    });
    try {
      const removed = await runner.reap();
      // Checked by state, not only by the list: a concurrent run's reap may have removed it first.
      await expect(overdue.inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await current.inspect()).Name).toBe(`/platform-task-reap-${run}-new`);
      expect(removed).not.toContain(`platform-task-reap-${run}-new`);
    } finally {
      await current.remove({ force: true });
    }
  });
});
