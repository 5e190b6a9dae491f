import { randomBytes, randomUUID } from "node:crypto";
import { type Backend, createLogger } from "@platform/core";
import { testBackends } from "@platform/core/testing";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokerOf } from "../../src/broker/broker-routes.js";
import { createMaster } from "../../src/master.js";
import { jsonInit, startTestMaster, type TestMaster } from "../test-master.js";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  eventually,
  executorsUnderTest,
  IMAGES,
  leftoversOf,
  type TestChallenge,
} from "./docker-test-env.js";

const env = await dockerForTests();
const executors = await executorsUnderTest();
const backends = await testBackends();
// The rules that live in Postgres (quota, ownership, reaping) run on every database backend on
// the engine; the swarm variant runs them once more on the first backend.
const matrix: [string, Backend][] = [
  ...backends.map((backend): [string, Backend] => ["engine", backend]),
  ...(executors.includes("swarm") ? [["swarm", backends[0]!] as [string, Backend]] : []),
];

const MAX_CONCURRENT = 2;

describe.skipIf(!env || executors.length === 0).each(matrix)(
  "broker API on the %s backend with %s",
  (executor, backend) => {
    const docker = env?.docker as Docker;
    const swarm = executor === "swarm";
    let t: TestMaster;
    let base: string;
    let a: TestChallenge;
    let b: TestChallenge;
    let masterId: string;
    const suffix = `${executor}-${backend}`;

    beforeAll(async () => {
      t = await startTestMaster(
        backend,
        brokerTestConfig(executor as "engine" | "swarm", (config) => {
          config.broker.maxConcurrent = MAX_CONCURRENT;
          config.broker.files.maxFileBytes = 4096;
          config.broker.files.maxCount = 8;
        }),
      );
      base = (await t.listen()).admin.url;
      a = await createChallenge(t, `alpha-${suffix}`);
      b = await createChallenge(t, `bravo-${suffix}`);
      masterId = await brokerOf(t.master.context)!.ledger.instanceId();
    });
    afterAll(async () => {
      await t?.close();
      if (t) expect(await leftoversOf(docker, masterId, swarm)).toEqual([]);
    });

    const post = (path: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${base}${path}`, jsonInit("POST", body, headers));
    const run = (body: Record<string, unknown>, headers = a.headers) =>
      post(
        "/v1/docker/run",
        { image: IMAGES.busybox, command: ["true"], timeout_seconds: 60, ...body },
        headers,
      );
    const rowCount = async () =>
      Number((await t.master.database.sql`select count(*)::int as n from broker_runs`)[0]!.n);
    const listNames = async (challenge: TestChallenge, body: Record<string, unknown> = {}) => {
      const res = await post("/v1/docker/list", body, challenge.headers);
      expect(res.status).toBe(200);
      return ((await res.json()) as { containers: { container_name: string }[] }).containers.map(
        (c) => c.container_name,
      );
    };
    /** Start a long run in the background and wait until it is listed. */
    const startLong = async (challenge: TestChallenge, job: string) => {
      const pending = run({ job_id: job, command: ["sleep", "30"] }, challenge.headers).then(
        async (res) => ({ status: res.status, body: await res.json() }),
      );
      let name = "";
      await eventually(
        async () => {
          const [row] = await t.master.database.sql<{ container_name: string }[]>`
        select container_name from broker_runs where job_id = ${job} and ended_at is null`;
          name = row?.container_name ?? "";
          return name !== "" && (await listNames(challenge)).includes(name);
        },
        20_000,
        `${job} to be listed`,
      );
      return { name, pending };
    };

    describe("authentication", () => {
      const routes = [
        ["POST", "/v1/docker/run", { job_id: "j", image: IMAGES.busybox }],
        ["POST", "/v1/docker/list", {}],
        ["POST", "/v1/docker/cleanup", {}],
        ["GET", "/v1/docker/gpu-leases", undefined],
      ] as const;
      const call = (method: string, path: string, body: unknown, headers: Record<string, string>) =>
        fetch(
          `${base}${path}`,
          body === undefined ? { method, headers } : jsonInit(method, body, headers),
        );

      it.each([
        ["no credentials", () => ({})],
        ["a token without the slug header", () => ({ authorization: `Bearer ${a.token}` })],
        ["the slug header without a token", () => ({ "x-platform-challenge-slug": a.slug })],
        [
          "a wrong token",
          () => ({ authorization: "Bearer bt_wrong", "x-platform-challenge-slug": a.slug }),
        ],
        // A prefix-matching compare would accept these two (issue 10, tests that cannot fail).
        [
          "A's token less its last character",
          () => ({
            authorization: `Bearer ${a.token.slice(0, -1)}`,
            "x-platform-challenge-slug": a.slug,
          }),
        ],
        [
          "A's token with a suffix",
          () => ({ authorization: `Bearer ${a.token}x`, "x-platform-challenge-slug": a.slug }),
        ],
        [
          "A's token for B",
          () => ({ authorization: `Bearer ${a.token}`, "x-platform-challenge-slug": b.slug }),
        ],
        [
          "A's token for a slug that does not exist",
          () => ({
            authorization: `Bearer ${a.token}`,
            "x-platform-challenge-slug": "no-such-challenge",
          }),
        ],
        [
          "A's challenge token instead of its broker token",
          () => ({
            authorization: `Bearer ${a.challengeToken}`,
            "x-platform-challenge-slug": a.slug,
          }),
        ],
        [
          "the admin token",
          () => ({ authorization: `Bearer ${t.adminToken}`, "x-platform-challenge-slug": a.slug }),
        ],
      ])("answers the same 401 to %s, and runs nothing", async (_label, headers) => {
        const before = await rowCount();
        for (const [method, path, body] of routes) {
          const res = await call(method, path, body, headers());
          expect(res.status, `${method} ${path}`).toBe(401);
          expect(await res.json()).toEqual({
            detail:
              "A valid broker token (Authorization: Bearer) and X-Platform-Challenge-Slug are required",
            code: "broker_unauthorized",
          });
        }
        expect(await rowCount()).toBe(before);
      });

      it("refuses a disabled challenge with 403, and lets draft and inactive ones run", async () => {
        const c = await createChallenge(t, `charlie-${suffix}`);
        await t.master.store.setStatus(c.slug, "disabled", "test");
        const refused = await run({ job_id: "disabled" }, c.headers);
        expect(refused.status).toBe(403);
        expect(await refused.json()).toMatchObject({ code: "challenge_disabled" });
        for (const status of ["draft", "inactive"] as const) {
          await t.master.store.setStatus(c.slug, status);
          const ok = await post("/v1/docker/list", {}, c.headers);
          expect(ok.status).toBe(200);
        }
      });
    });

    describe("refusals happen before anything is written or created", () => {
      const cases: [string, Record<string, unknown>, string, string?][] = [
        ["privileged", { privileged: true }, "weakening_refused", "privileged"],
        ["a bridge network", { network: "bridge" }, "weakening_refused", "network"],
        ["the host network", { network: "host" }, "weakening_refused", "network"],
        ["a writable root", { read_only: false }, "weakening_refused", "read_only"],
        ["an added capability", { cap_add: ["SYS_ADMIN"] }, "weakening_refused", "cap_add"],
        ["a device", { devices: ["/dev/kvm"] }, "weakening_refused", "devices"],
        ["a host mount", { host_mounts: ["/:/host"] }, "weakening_refused", "host_mounts"],
        ["user root", { user: "root" }, "weakening_refused", "user"],
        ["user 0", { user: "0" }, "weakening_refused", "user"],
        ["user 0:0", { user: "0:0" }, "weakening_refused", "user"],
        ["group 0", { user: "1000:0" }, "weakening_refused", "user"],
        ["a user name", { user: "nobody" }, "weakening_refused", "user"],
        // Issue 10 item 8: these passed admission and then failed in Docker as executor_error.
        ["a uid past 2^32 - 2", { user: "4294967296" }, "weakening_refused", "user"],
        ["a gid past 2^32 - 2", { user: "4242:4294967296" }, "weakening_refused", "user"],
        // Issue 10 item 9: these were 422 extra_forbidden, unlike every other weakening.
        ...(
          [
            ["security_opt", ["seccomp=unconfined"]],
            ["pid_mode", "host"],
            ["ipc_mode", "host"],
            ["userns_mode", "host"],
            ["sysctls", { "net.ipv4.ip_forward": "1" }],
            ["ulimits", [{ Name: "nproc", Soft: -1, Hard: -1 }]],
            ["binds", ["/:/host"]],
            ["mounts", [{ Type: "bind", Source: "/", Target: "/host" }]],
            ["runtime", "runc"],
          ] as const
        ).map(
          ([field, value]) =>
            [field, { [field]: value }, "weakening_refused", field] as [
              string,
              Record<string, unknown>,
              string,
              string,
            ],
        ),
        ["more CPUs than the maximum", { limits: { cpus: 3 } }, "limit_exceeded", "limits.cpus"],
        [
          "more memory than the maximum",
          { limits: { memory_mb: 8192 } },
          "limit_exceeded",
          "limits.memory_mb",
        ],
        ["more pids than the maximum", { limits: { pids: 4096 } }, "limit_exceeded", "limits.pids"],
        [
          "a broker label",
          { labels: { "platform.master": "someone-else" } },
          "invalid_label",
          "labels.platform.master",
        ],
        ["a GPU on a host without one", { gpus: 1 }, "gpu_unavailable"],
        [
          "an image outside the allow-list",
          { image: "docker.io/library/alpine:3.20" },
          "image_not_allowed",
        ],
        [
          "an image that only looks allowed",
          { image: "platform-test.evil.example/x:1" },
          "image_not_allowed",
        ],
        [
          "an allowed image that is nowhere",
          { image: "platform-test/not-built:1" },
          "image_unavailable",
        ],
      ];
      it.each(cases)("refuses %s", async (_label, body, code, field) => {
        const before = await rowCount();
        const res = await run({ job_id: "refused", ...body });
        expect(res.status).toBe(400);
        const answer = (await res.json()) as { code: string; detail: string; field?: string };
        expect(answer.code).toBe(code);
        if (field) {
          expect(answer.field).toBe(field);
          expect(answer.detail).toContain(field);
        }
        expect(await rowCount()).toBe(before);
        expect(await listNames(a, { job_id: "refused" })).toEqual([]);
      });

      const b64 = (text: string) => Buffer.from(text).toString("base64");
      it.each([
        ["a parent traversal", [{ path: "../escape.txt", content_base64: b64("x") }]],
        ["a traversal inside the path", [{ path: "a/../../escape.txt", content_base64: b64("x") }]],
        ["an absolute path", [{ path: "/etc/passwd", content_base64: b64("x") }]],
        ["a NUL byte", [{ path: "a\u0000b", content_base64: b64("x") }]],
        ["a dot segment", [{ path: "./a", content_base64: b64("x") }]],
        ["an empty segment", [{ path: "a//b", content_base64: b64("x") }]],
        ["a backslash", [{ path: "a\\..\\b", content_base64: b64("x") }]],
        [
          "the same path twice",
          [
            { path: "a", content_base64: b64("x") },
            { path: "a", content_base64: b64("y") },
          ],
        ],
        [
          "a path under a file",
          [
            { path: "a", content_base64: b64("x") },
            { path: "a/b", content_base64: b64("y") },
          ],
        ],
        ["invalid base64", [{ path: "a", content_base64: "not base64!" }]],
        [
          "a file above the per-file cap",
          [{ path: "big", content_base64: Buffer.alloc(4097).toString("base64") }],
        ],
        [
          "too many files",
          Array.from({ length: 9 }, (_, i) => ({ path: `f${i}`, content_base64: b64("x") })),
        ],
        // Issue 10 item 8: the tar writer stores "dir/", which cannot hold a 100-byte name.
        ["a 100-byte directory name", [{ path: `${"d".repeat(100)}/f`, content_base64: b64("x") }]],
      ])("refuses files with %s (400 invalid_file)", async (_label, files) => {
        const before = await rowCount();
        const res = await run({ job_id: "files", files });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ code: "invalid_file" });
        expect(await rowCount()).toBe(before);
      });

      it("places an empty file on the engine; swarm configs cannot hold one (400 invalid_file)", async () => {
        const res = await run({
          job_id: "empty-file",
          files: [{ path: "empty", content_base64: "" }],
          command: ["sh", "-c", "test -f /workspace/empty && test ! -s /workspace/empty"],
        });
        if (swarm) {
          expect(res.status).toBe(400);
          expect(await res.json()).toMatchObject({ code: "invalid_file", index: 0 });
        } else {
          expect(res.status).toBe(200);
          expect(await res.json()).toMatchObject({ returncode: 0 });
        }
      });

      it("refuses a file mode above 0o777 (setuid) as a weakening, like every other one", async () => {
        const before = await rowCount();
        const res = await run({
          job_id: "setuid",
          files: [{ path: "su", content_base64: b64("x"), mode: 0o4755 }],
        });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ code: "weakening_refused", field: "mode" });
        expect(await rowCount()).toBe(before);
      });

      it("answers an executor error as 400 with its code and frees the slot", async () => {
        // A working directory that is a file in the image: admission cannot know, Docker can't
        // create it. (An out-of-range user used to serve here; admission now refuses it.)
        const res = await run({ job_id: "bad-user", workdir: "/bin/busybox" });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ code: "executor_error" });
        const [row] = await t.master.database
          .sql`select status from broker_runs where job_id = 'bad-user'`;
        expect(row).toMatchObject({ status: "failed" });
        expect((await brokerOf(t.master.context)!.ledger.live(a.slug)).length).toBe(0);
      });
    });

    it(`admits exactly ${MAX_CONCURRENT} of ${MAX_CONCURRENT + 2} concurrent runs; the rest are 429 with the limit and Retry-After`, async () => {
      const answers = await Promise.all(
        Array.from({ length: MAX_CONCURRENT + 2 }, (_, i) =>
          run({ job_id: `quota-${i}`, command: ["sleep", swarm ? "5" : "3"] }).then(
            async (res) => ({
              status: res.status,
              retryAfter: res.headers.get("retry-after"),
              body: (await res.json()) as Record<string, unknown>,
            }),
          ),
        ),
      );
      const admitted = answers.filter((answer) => answer.status === 200);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(admitted).toHaveLength(MAX_CONCURRENT);
      expect(refused).toHaveLength(2);
      for (const answer of refused) {
        expect(answer.body).toMatchObject({
          code: "quota_exceeded",
          resource: "containers",
          limit: MAX_CONCURRENT,
          in_use: MAX_CONCURRENT,
        });
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      for (const answer of admitted)
        expect(answer.body).toMatchObject({ returncode: 0, timed_out: false });
      // The slots are free again once those runs have ended.
      expect((await brokerOf(t.master.context)!.ledger.live(a.slug)).length).toBe(0);
      const again = await run({ job_id: "quota-after" });
      expect(again.status).toBe(200);
    });

    it("keeps each challenge to its own workloads: B can neither list nor clean up A's", async () => {
      const { name, pending } = await startLong(a, "owned");
      expect(await listNames(b)).toEqual([]);
      const byName = await post("/v1/docker/cleanup", { container_name: name }, b.headers);
      expect(await byName.json()).toEqual({ status: "ok", removed: [] });
      const all = await post("/v1/docker/cleanup", {}, b.headers);
      expect(await all.json()).toEqual({ status: "ok", removed: [] });
      expect(await listNames(a, { job_id: "owned" })).toEqual([name]);
      const [listed] = (
        (await (await post("/v1/docker/list", { job_id: "owned" }, a.headers)).json()) as {
          containers: Record<string, unknown>[];
        }
      ).containers;
      expect(listed).toMatchObject({
        container_name: name,
        job_id: "owned",
        image: IMAGES.busybox,
        gpus: 0,
      });

      const cleaned = await post("/v1/docker/cleanup", { job_id: "owned" }, a.headers);
      expect(await cleaned.json()).toEqual({ status: "ok", removed: [name] });
      const answer = await pending;
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({ code: "workload_removed", container_name: name });
      const [row] = await t.master.database
        .sql`select status from broker_runs where container_name = ${name}`;
      expect(row).toMatchObject({ status: "cleaned" });
    });

    /** A workload made directly with Docker, labelled as the broker labels its own. */
    const plant = async (job: string, deadline: number, deployment = masterId): Promise<string> => {
      const name = `platform-${a.slug}-${job}-${randomBytes(4).toString("hex")}`;
      const labels = {
        "platform.managed": "true",
        "platform.challenge": a.slug,
        "platform.job": job,
        "platform.deadline": String(deadline),
        "platform.master": deployment,
        "platform.gpus": "0",
        "platform.role": "run",
      };
      if (swarm) {
        await docker.createService({
          Name: name,
          Labels: labels,
          TaskTemplate: {
            ContainerSpec: { Image: IMAGES.busybox, Args: ["sleep", "60"], Labels: labels },
            RestartPolicy: { Condition: "none" },
          },
          Mode: { Replicated: { Replicas: 1 } },
        });
      } else {
        const container = await docker.createContainer({
          name,
          Image: IMAGES.busybox,
          Cmd: ["sleep", "60"],
          Labels: labels,
          HostConfig: { NetworkMode: "none" },
        });
        await container.start();
      }
      return name;
    };
    const exists = async (name: string) => {
      try {
        await (swarm ? docker.getService(name).inspect() : docker.getContainer(name).inspect());
        return true;
      } catch {
        return false;
      }
    };

    describe("the reaper", () => {
      it("removes an orphan (a managed workload with no live row), never another deployment's", async () => {
        const orphan = await plant("orphan", Math.floor(Date.now() / 1000) + 600);
        // Another master's workload on the same engine: same labels, same challenge slug, even
        // past its deadline; only its deployment id differs. It is not ours to list or reap.
        const foreign = await plant("foreign", Math.floor(Date.now() / 1000) - 120, randomUUID());
        try {
          const report = await brokerOf(t.master.context)!.reap();
          expect(report.removed).toContainEqual({ name: orphan, reason: "orphan" });
          expect(await exists(orphan)).toBe(false);
          expect(report.removed.map((r) => r.name)).not.toContain(foreign);
          expect(await exists(foreign)).toBe(true);
          expect(await listNames(a)).not.toContain(foreign);
          const cleaned = await post("/v1/docker/cleanup", {}, a.headers);
          expect(((await cleaned.json()) as { removed: string[] }).removed).not.toContain(foreign);
          expect(await exists(foreign)).toBe(true);
        } finally {
          await (swarm
            ? docker.getService(foreign).remove()
            : docker.getContainer(foreign).remove({ force: true }));
        }
      });

      it("removes a workload past its deadline and ends its row", async () => {
        const name = await plant("overdue", Math.floor(Date.now() / 1000) - 120);
        await t.master.database.sql`
        insert into broker_runs (container_name, slug, job_id, backend, engine_id, runner, image, deadline)
        values (${name}, ${a.slug}, 'overdue', ${executor}, 'x', 'another-process', ${IMAGES.busybox}, now() - interval '2 minutes')`;
        const report = await brokerOf(t.master.context)!.reap();
        expect(report.removed).toContainEqual({ name, reason: "deadline" });
        expect(await exists(name)).toBe(false);
        const [row] = await t.master.database
          .sql`select status from broker_runs where container_name = ${name}`;
        expect(row).toMatchObject({ status: "reaped" });
      });

      it("kills the workloads of a challenge that gets disabled", async () => {
        const c = await createChallenge(t, `delta-${suffix}`);
        const { name, pending } = await startLong(c, "killed");
        await t.master.store.setStatus(c.slug, "disabled", "kill switch");
        const report = await brokerOf(t.master.context)!.reap();
        expect(report.removed).toContainEqual({ name, reason: "disabled" });
        expect((await pending).status).toBe(409);
      });

      it("removes the helpers a crash left behind (files, staging, networks, configs) once no row is live", async () => {
        const ghost = `platform-${a.slug}-ghost-${randomBytes(4).toString("hex")}`;
        const labels = (role: string) => ({
          "platform.managed": "true",
          "platform.challenge": a.slug,
          "platform.job": "ghost",
          "platform.deadline": "0",
          "platform.master": masterId,
          "platform.role": role,
        });
        const gone: (() => Promise<unknown>)[] = [];
        if (swarm) {
          const network = await docker.createNetwork({
            Name: ghost,
            Driver: "overlay",
            Internal: true,
            Labels: labels("network"),
          });
          const config = (await docker.createConfig({
            Name: `${ghost}-f0`,
            Labels: labels("files"),
            Data: "aGk=",
          })) as { id: string };
          gone.push(
            () => network.inspect(),
            () => docker.getConfig(config.id).inspect(),
          );
        } else {
          await docker.createVolume({ Name: ghost, Labels: labels("files") });
          const staging = await docker.createContainer({
            name: `${ghost}-staging`,
            Image: IMAGES.busybox,
            Labels: labels("staging"),
          });
          gone.push(
            () => docker.getVolume(ghost).inspect(),
            () => staging.inspect(),
          );
        }
        const report = await brokerOf(t.master.context)!.reap();
        expect(report.leftovers).toBeGreaterThanOrEqual(2);
        for (const inspect of gone)
          await expect(inspect()).rejects.toMatchObject({ statusCode: 404 });
      });

      it("on a restarted master, closes rows whose workload is gone and removes orphans at start", async () => {
        const facts = await brokerOf(t.master.context)!.executor.facts();
        await t.master.database.sql`
        insert into broker_runs (container_name, slug, job_id, backend, engine_id, runner, image, deadline, started_at)
        values ('platform-crashed-run', ${a.slug}, 'crashed', ${executor}, ${facts.engineId}, 'a-dead-process', ${IMAGES.busybox},
                now() + interval '1 hour', now() - interval '5 minutes')`;
        const orphan = await plant("left-by-crash", Math.floor(Date.now() / 1000) + 600);
        const second = await createMaster(t.master.config, {
          database: t.master.database,
          masterKey: randomBytes(32),
          logger: createLogger({ name: "second-master", level: "silent" }),
        });
        try {
          await second.listen({ host: "127.0.0.1", port: 0 });
          await eventually(
            async () => {
              const [row] = await t.master.database
                .sql`select status from broker_runs where container_name = 'platform-crashed-run'`;
              return row?.status === "lost" && !(await exists(orphan));
            },
            20_000,
            "the restarted master to reconcile",
          );
        } finally {
          await second.close();
        }
      });
    });

    it("lists the challenge's GPU leases (none here) with its limit", async () => {
      const res = await fetch(`${base}/v1/docker/gpu-leases`, { headers: a.headers });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ slug: a.slug, limit: 0, in_use: 0, leases: [] });
    });
  },
);
