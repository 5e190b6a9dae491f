// Updates by digest with rollback, on a real engine through the real proxy: requests sent
// throughout an update all succeed; an image that never becomes ready is rolled back with the
// old container never stopped, and both outcomes are recorded.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { challengeContainerName } from "../../src/runtime/challenge-containers.js";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  eventually,
  IMAGES,
} from "../broker/docker-test-env.js";
import { jsonInit, startTestMaster, type TestMaster } from "../test-master.js";
import {
  containerOf,
  fastReconciler,
  inVolume,
  runtimeOf,
  untilObserved,
} from "./reconciler-kit.js";

const env = await dockerForTests();
// Its shell has no input: it exits at once, never ready.
const NEVER_READY = IMAGES.nonroot;

describe.skipIf(!env)("updates by digest with rollback", () => {
  const docker = env?.docker as Docker;
  const run = randomBytes(3).toString("hex");
  const network = `platform-test-${run}`;
  const slug = `ru-${run}`;
  const www = `platform-${slug}-www`;
  let t: TestMaster;
  let publicUrl: string;
  const runtime = () => runtimeOf(t.adminFetch, t.admin, slug);

  /**
   * GET /ping through the proxy from three clients at once until stopped; every status. Each
   * client pauses 10 ms between requests: a request every few milliseconds still spans the
   * switch, and back to back they cost the suite seconds of CPU to prove nothing more.
   */
  function load() {
    const statuses: number[] = [];
    let on = true;
    const worker = async () => {
      while (on) {
        try {
          const response = await fetch(`${publicUrl}/challenges/${slug}/ping`);
          await response.text();
          statuses.push(response.status);
        } catch {
          statuses.push(0);
        }
        await sleep(10);
      }
    };
    const workers = [worker(), worker(), worker()];
    return {
      statuses,
      stop: async () => {
        on = false;
        await Promise.all(workers);
        return statuses;
      },
    };
  }

  /** POST …/update as a stream: the progress events' steps and the result. */
  async function update(image: string) {
    const response = await t.adminFetch(
      `/v1/admin/challenges/${slug}/update?stream=1`,
      jsonInit("POST", { image }, t.admin),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = (await response.text())
      .split("\n\n")
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)?.[1],
        data: /^data: (.*)$/m.exec(block)?.[1],
      }))
      .filter((e) => e.event && e.data)
      .map((e) => ({ event: e.event!, data: JSON.parse(e.data!) as Record<string, string> }));
    return {
      steps: events.filter((e) => e.event === "progress").map((e) => e.data.step),
      result: events.find((e) => e.event === "result")?.data,
    };
  }

  beforeAll(async () => {
    t = await startTestMaster(
      "postgres",
      brokerTestConfig("engine", (config) => fastReconciler(config, network)),
    );
    await createChallenge(t, slug, { volumes: { www: "/www" } });
    publicUrl = (await t.listen()).url;
    await untilObserved(t.adminFetch, t.admin, slug, "running");
    await inVolume(docker, www, "echo pong > /vol/ping");
  });
  afterAll(async () => {
    await t?.close();
    for (const name of ["", "-next", "-old"])
      await docker
        .getContainer(`${challengeContainerName(slug)}${name}`)
        .remove({ force: true })
        .catch(() => {});
    await docker
      .getVolume(www)
      .remove()
      .catch(() => {});
    await docker
      .getNetwork(network)
      .remove()
      .catch(() => {});
  });

  it("moves the proxy to the new container once ready; every request during it succeeds", async () => {
    const old = await containerOf(docker, slug);
    const traffic = load();
    await sleep(500);
    const { steps, result } = await update(IMAGES.challengeHealthcheck);
    await sleep(1_000);
    const statuses = await traffic.stop();
    expect(result).toMatchObject({ slug, operation: "update", status: "updated" });
    expect(steps).toEqual(expect.arrayContaining(["pinned", "started", "ready", "switched"]));
    expect(steps.at(-1)).toBe("stopped_old");
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const now = await containerOf(docker, slug);
    const image = await docker.getImage(IMAGES.challengeHealthcheck).inspect();
    expect(now?.Id).not.toBe(old?.Id);
    expect(now?.Config.Image).toBe(image.Id);
    expect(
      await docker
        .getContainer(old!.Id)
        .inspect()
        .catch(() => null),
    ).toBeNull();
    const { runtime: state, events } = await runtime();
    expect(state).toMatchObject({
      image: IMAGES.challengeHealthcheck,
      pinned_image: image.Id,
      container_id: now?.Id,
      last_action: "update",
    });
    expect(events[0]).toMatchObject({
      kind: "runtime_updated",
      detail: { reason: "operator update", pinned_image: image.Id },
    });
    // The reconciler sees the new container as current: it leaves it alone.
    await sleep(2_500);
    expect((await containerOf(docker, slug))?.Id).toBe(now?.Id);
  }, 60_000);

  it("stops the old container only once the requests under way on it have ended", async () => {
    // 32 MiB read by a client that pauses: still streaming from the old container when the
    // proxy switches, far more than the sockets between them can buffer.
    await inVolume(docker, www, "dd if=/dev/zero of=/vol/big bs=1048576 count=32 2>/dev/null");
    const old = await containerOf(docker, slug);
    const response = await fetch(`${publicUrl}/challenges/${slug}/big`);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const download = (async () => {
      let bytes = (await reader.read()).value?.byteLength ?? 0;
      await sleep(3_000);
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        bytes += chunk.value.byteLength;
      return bytes;
    })();
    const { steps, result } = await update(IMAGES.challenge);
    expect(result).toMatchObject({ status: "updated" });
    expect(await download.catch((error: Error) => error.message)).toBe(32 * 1024 * 1024);
    expect(steps).toContain("draining");
    expect(steps.at(-1)).toBe("stopped_old");
    expect(
      await docker
        .getContainer(old!.Id)
        .inspect()
        .catch(() => null),
    ).toBeNull();
    expect((await runtime()).runtime.image).toBe(IMAGES.challenge);
  }, 60_000);

  it("rolls back an image that never becomes ready: the old container is never stopped", async () => {
    const old = await containerOf(docker, slug);
    const traffic = load();
    const { steps, result } = await update(NEVER_READY);
    const statuses = await traffic.stop();
    expect(result).toMatchObject({ status: "rolled_back" });
    // Which one depends on how fast it exits: before or after Docker gave it an address.
    expect(result?.detail).toMatch(
      /^(the new container exited with code \d+ before it was ready|platform-challenge-ru-\w+-next started without an address on network \S+)$/,
    );
    expect(steps).toContain("pinned");
    expect(steps).not.toContain("switched");
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const still = await containerOf(docker, slug);
    expect(still?.Id).toBe(old?.Id);
    expect(still?.State.Running).toBe(true);
    expect(still?.State.StartedAt).toBe(old?.State.StartedAt);
    expect(
      await docker
        .getContainer(`${challengeContainerName(slug)}-next`)
        .inspect()
        .catch(() => null),
    ).toBeNull();
    // The registry names the image that still serves; the attempt and its reason are recorded.
    expect((await t.master.store.get(slug)).image).toBe(IMAGES.challenge);
    const { runtime: state, events } = await runtime();
    expect(state).toMatchObject({ last_action: "rollback", container_id: old?.Id });
    expect(state.last_error).toMatch(/^update to platform-test\/nonroot:1 rolled back: /);
    expect(events[0]).toMatchObject({
      kind: "runtime_rolled_back",
      detail: { image: NEVER_READY, kept: old?.Id, restored_image: IMAGES.challenge },
    });
  }, 60_000);

  it("rolls back a PATCH of the image too (the reconciler's own update), and does not retry it", async () => {
    const old = await containerOf(docker, slug);
    const traffic = load();
    const patch = await t.adminFetch(
      `/v1/admin/challenges/${slug}`,
      jsonInit("PATCH", { image: NEVER_READY }, t.admin),
    );
    expect(patch.status).toBe(200);
    await eventually(
      async () =>
        (await runtime()).events.filter((e) => e.kind === "runtime_rolled_back").length === 2,
      30_000,
      "the second rollback",
    );
    await sleep(2_500);
    const statuses = await traffic.stop();
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect((await containerOf(docker, slug))?.Id).toBe(old?.Id);
    const { events } = await runtime();
    expect(events.filter((e) => e.kind === "runtime_rolled_back")).toHaveLength(2);
    expect(events[0]?.kind).toBe("runtime_rolled_back");
    expect(events[0]?.detail.reason).toMatch(/before it was ready|started without an address/);
  }, 60_000);

  it("rolls back a new container that runs but is not ready in time, and retries it after the backoff", async () => {
    const old = await containerOf(docker, slug);
    const traffic = load();
    const rollbacks = async () =>
      (await runtime()).events.filter((e) => e.kind === "runtime_rolled_back");
    const before = (await rollbacks()).length;
    // Told to listen on 9999, its server still listens on 8080: it runs, never ready.
    const patch = (metadata: Record<string, unknown>) =>
      t.adminFetch(`/v1/admin/challenges/${slug}`, jsonInit("PATCH", { metadata }, t.admin));
    expect((await patch({ port: 9999 })).status).toBe(200);
    await eventually(async () => (await rollbacks()).length > before, 30_000, "a rollback");
    const [rollback] = await rollbacks();
    expect(rollback?.detail.reason).toMatch(
      /^the new container was not ready within 8 s \(last probe: unreachable \(\w+\)\)$/,
    );
    // The record is not an image: the registry keeps it, the reconciler tries again later.
    await eventually(async () => (await rollbacks()).length > before + 1, 40_000, "a retry");
    expect((await patch({})).status).toBe(200);
    const statuses = await traffic.stop();
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect((await containerOf(docker, slug))?.Id).toBe(old?.Id);
  }, 90_000);

  it("removes a -old container an interrupted update left behind, and leaves the serving one", async () => {
    const serving = await containerOf(docker, slug);
    const labels = serving!.Config.Labels;
    const leftover = await docker.createContainer({
      name: `${challengeContainerName(slug)}-old`,
      Image: IMAGES.busybox,
      Cmd: ["sleep", "600"],
      Labels: {
        "platform.runtime": labels["platform.runtime"]!,
        "platform.master": labels["platform.master"]!,
        "platform.challenge": slug,
      },
    });
    await leftover.start();
    await eventually(
      async () => (await leftover.inspect().catch(() => null)) === null,
      20_000,
      "the leftover to be removed",
    );
    expect((await containerOf(docker, slug))?.Id).toBe(serving?.Id);
  }, 30_000);

  it("refuses an update of an inactive challenge and an image the policy refuses", async () => {
    const post = (body: unknown) =>
      t.adminFetch(`/v1/admin/challenges/${slug}/update`, jsonInit("POST", body, t.admin));
    const noAuth = await t.adminFetch(
      `/v1/admin/challenges/${slug}/update`,
      jsonInit("POST", { image: IMAGES.challenge }, {}),
    );
    expect(noAuth.status).toBe(401);
    expect((await post({})).status).toBe(422);
    const missing = await t.adminFetch(
      "/v1/admin/challenges/no-such-one/update",
      jsonInit("POST", { image: IMAGES.challenge }, t.admin),
    );
    expect(missing.status).toBe(404);
    await t.adminFetch(`/v1/admin/challenges/${slug}/deactivate`, {
      method: "POST",
      headers: t.admin,
    });
    const inactive = await post({ image: IMAGES.challenge });
    expect(inactive.status).toBe(409);
    expect(await inactive.json()).toMatchObject({ code: "challenge_not_active" });
    expect((await t.master.store.get(slug)).image).toBe(IMAGES.challenge);
  });
});
