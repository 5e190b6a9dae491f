// The reconciler against a real Docker engine and a real PostgreSQL: it starts every active
// challenge and no other, brings a killed container back within its period (the proxy answers
// 502 upstream_unavailable meanwhile and never a 5xx after), restarts an unready one with
// backoff, stops what is deactivated, replaces what the registry changed, and shows all of it.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  brokerTestConfig,
  createChallenge,
  dockerForTests,
  eventually,
  IMAGES,
} from "../../test/broker/docker-test-env.js";
import {
  containerOf,
  fastReconciler,
  inVolume,
  runtimeOf,
  untilObserved,
} from "../../test/reconciler/reconciler-kit.js";
import { jsonInit, startTestMaster, type TestMaster } from "../../test/test-master.js";
import { challengeContainerName } from "../runtime/challenge-containers.js";
import { reconcilerOf } from "./reconciler-routes.js";

const env = await dockerForTests();

describe.skipIf(!env)("the reconciler on a real engine", () => {
  const docker = env?.docker as Docker;
  const run = randomBytes(3).toString("hex");
  const network = `platform-test-${run}`;
  const [web, idle, sick, own] = ["web", "idle", "sick", "own"].map(
    (name) => `rc-${name}-${run}`,
  ) as [string, string, string, string];
  const slugs = [web, idle, sick, own];
  let t: TestMaster;
  let publicUrl: string;
  const www = (slug: string) => `platform-${slug}-www`;
  const runtime = (slug: string) => runtimeOf(t.adminFetch, t.admin, slug);
  const observed = (slug: string, state: string, timeoutMs?: number) =>
    untilObserved(t.adminFetch, t.admin, slug, state, timeoutMs);
  // The proxy may serve the new container before the reconciler has written its state: wait
  // until the state names the container that runs and has seen it ready.
  const settled = async (slug: string) => {
    let last: Awaited<ReturnType<typeof runtime>>["runtime"] | undefined;
    await eventually(
      async () => {
        last = (await runtime(slug)).runtime;
        const running = await containerOf(docker, slug);
        return last.observed === "running" && last.container_id === running?.Id;
      },
      20_000,
      `${slug}'s state to settle`,
    );
    return last!;
  };
  const proxied = async (slug: string) => {
    const response = await fetch(`${publicUrl}/challenges/${slug}/ping`);
    const text = await response.text();
    return { status: response.status, text };
  };

  beforeAll(async () => {
    t = await startTestMaster(
      "postgres",
      brokerTestConfig("engine", (config) => fastReconciler(config, network)),
    );
    // Registered before the master listens: the first pass at start must run them.
    await createChallenge(t, web, { volumes: { www: "/www" }, env: { MODE: "one" } });
    await createChallenge(t, idle, { status: "inactive" });
    await createChallenge(t, sick, { volumes: { www: "/www" } });
    // Run by its operator elsewhere: the reconciler leaves it alone.
    await createChallenge(t, own, {
      metadata: { managed: false },
      internal_base_url: "http://127.0.0.1:9/",
    });
    publicUrl = (await t.listen()).url;
  });
  afterAll(async () => {
    await t?.close();
    for (const slug of slugs) {
      await docker
        .getContainer(challengeContainerName(slug))
        .remove({ force: true })
        .catch(() => {});
      await docker
        .getVolume(www(slug))
        .remove()
        .catch(() => {});
    }
    await docker
      .getNetwork(network)
      .remove()
      .catch(() => {});
  });

  it("starts every active challenge at start, pinned to its image's content, and nothing else", async () => {
    const state = await observed(web, "running");
    const image = await docker.getImage(IMAGES.challenge).inspect();
    expect(state).toMatchObject({
      desired: "running",
      image: IMAGES.challenge,
      pinned_image: image.Id,
      restarts: 0,
      last_action: "start",
      last_error: null,
    });
    const info = await containerOf(docker, web);
    expect(info?.Id).toBe(state.container_id);
    expect(info?.Config.Image).toBe(image.Id);
    expect(info?.Config.Labels).toMatchObject({
      "platform.challenge": web,
      "platform.port": "8080",
    });
    expect(info?.Config.Labels["platform.spec"]).toMatch(/^[0-9a-f]{32}$/);
    await observed(idle, "stopped");
    expect(await containerOf(docker, idle)).toBeNull();
    const unmanaged = (await runtime(own)).runtime;
    expect(unmanaged).toMatchObject({
      desired: "unmanaged",
      observed: "unknown",
      last_action: null,
    });
    expect(await containerOf(docker, own)).toBeNull();
    expect((await t.master.store.get(own)).internal_base_url).toBe("http://127.0.0.1:9/");
    const { events } = await runtime(web);
    expect(events.map((event) => event.kind)).toEqual(["runtime_started"]);
    const row = await t.master.store.get(web);
    expect(row.internal_base_url).toMatch(/^http:\/\/[\d.]+:8080$/);
  });

  it("shows its lease and every challenge to an admin only, in /readyz and in /metrics", async () => {
    expect((await t.adminFetch("/v1/admin/reconciler")).status).toBe(401);
    const status = (await (
      await t.adminFetch("/v1/admin/reconciler", { headers: t.admin })
    ).json()) as Record<string, unknown> & { challenges: { slug: string }[] };
    expect(status).toMatchObject({
      enabled: true,
      interval_seconds: 1,
      lease: { holder: reconcilerOf(t.master.context)!.lease.holder, live: true, last_error: null },
    });
    expect(status.challenges.map((c) => c.slug).sort()).toEqual([...slugs].sort());
    const unknown = await t.adminFetch("/v1/admin/challenges/no-such-one/runtime", {
      headers: t.admin,
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: "challenge_not_found" });
    expect((await t.adminFetch(`/v1/admin/challenges/${web}/runtime`)).status).toBe(401);
    const bad = await t.adminFetch("/v1/admin/challenges/Not_A_Slug/runtime", { headers: t.admin });
    expect(bad.status).toBe(422);
    const ready = await t.adminFetch("/readyz", { headers: t.admin });
    expect(((await ready.json()) as { checks: Record<string, unknown> }).checks).toMatchObject({
      reconciler: { status: "ok" },
    });
    const page = await (await t.adminFetch("/admin/challenges", { headers: t.admin })).text();
    const webRow = page.slice(page.indexOf(`data-slug="${web}"`));
    expect(webRow.slice(0, webRow.indexOf("</tr>"))).toMatch(
      /<td data-runtime><span class="badge active" data-observed="running">running<\/span>\s*<br><span class="muted">wants running · 0 restarts<\/span>/,
    );
    const metrics = await (await t.adminFetch("/metrics", { headers: t.admin })).text();
    expect(metrics).toContain("platform_reconciler_leader 1");
    expect(metrics).toContain(`platform_challenge_runtime_up{slug="${web}"} 1`);
    expect(metrics).toMatch(
      new RegExp(
        `platform_reconciler_actions_total\\{slug="${web}",action="start",outcome="ok"\\} 1`,
      ),
    );
  });

  it("brings a killed container back within its period: 502 upstream_unavailable meanwhile, no 5xx after", async () => {
    await inVolume(docker, www(web), "echo pong > /vol/ping");
    expect(await proxied(web)).toEqual({ status: 200, text: "pong\n" });
    const before = await containerOf(docker, web);
    // SIGKILL: Docker's own restart policy may race the reconciler to it; either way it is back.
    await docker.getContainer(before!.Id).kill();
    const killedAt = Date.now();
    const during: { status: number; text: string }[] = [];
    await eventually(
      async () => {
        const answer = await proxied(web);
        during.push(answer);
        return answer.status === 200;
      },
      20_000,
      "the challenge to serve again",
    );
    // Back within the period plus the time a start takes on a loaded machine.
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    for (const answer of during.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(502);
      expect(JSON.parse(answer.text)).toMatchObject({ code: "upstream_unavailable" });
    }
    for (let i = 0; i < 20; i++) expect((await proxied(web)).status).toBe(200);
    await settled(web);
  });

  it("restarts a container stopped under it (Docker's restart policy leaves that one down)", async () => {
    const before = await settled(web);
    await docker.getContainer(before.container_id!).stop({ t: 1 });
    const during: number[] = [];
    await eventually(
      async () => {
        const answer = await proxied(web);
        during.push(answer.status);
        return answer.status === 200;
      },
      20_000,
      "serving again",
    );
    expect(during.filter((status) => status !== 200 && status !== 502)).toEqual([]);
    const after = await settled(web);
    const { events } = await runtime(web);
    expect(after.restarts).toBe(before.restarts + 1);
    expect(after.container_id).not.toBe(before.container_id);
    expect(events[0]).toMatchObject({
      kind: "runtime_restarted",
      detail: { holder: expect.any(String) },
    });
    expect(events[0]!.detail.reason).toMatch(/^exited with code \d+$/);
    const metrics = await (await t.adminFetch("/metrics", { headers: t.admin })).text();
    expect(metrics).toMatch(
      new RegExp(
        `platform_reconciler_actions_total\\{slug="${web}",action="restart",outcome="ok"\\} [1-9]`,
      ),
    );
  });

  it("restarts a container removed under it", async () => {
    const before = await settled(web);
    await docker.getContainer(before.container_id!).remove({ force: true });
    await eventually(async () => (await proxied(web)).status === 200, 20_000, "serving again");
    const after = await settled(web);
    const { events } = await runtime(web);
    expect(after.restarts).toBe(before.restarts + 1);
    expect(events[0]).toMatchObject({
      kind: "runtime_restarted",
      detail: { reason: "no container" },
    });
  });

  it("restarts a challenge that stays unready, with a growing backoff, and leaves it once ready", async () => {
    await observed(sick, "running");
    // Not emptied: Docker fills an empty volume from the image again at the next mount.
    await inVolume(docker, www(sick), "touch /vol/keep && rm /vol/health");
    // No /readyz and no /health: unready; restarted after its grace and a failed probe.
    await eventually(
      async () =>
        (await runtime(sick)).events.filter((e) => e.kind === "runtime_restarted").length >= 4,
      60_000,
      "four restarts",
    );
    const restarts = (await runtime(sick)).events
      .filter((e) => e.kind === "runtime_restarted")
      .reverse();
    expect(restarts[0]!.detail.reason).toBe("unhealthy: GET /health 404");
    const gaps = restarts
      .slice(1)
      .map((e, i) => Date.parse(e.created_at) - Date.parse(restarts[i]!.created_at));
    // Each wait is at least the backoff of the failures before it: 1 s, 2 s, then the 4 s cap.
    expect(gaps.slice(0, 3).map((gap, i) => gap >= 1000 * 2 ** i - 100)).toEqual([
      true,
      true,
      true,
    ]);
    const state = (await runtime(sick)).runtime;
    expect(state.failures).toBeGreaterThanOrEqual(4);
    await inVolume(docker, www(sick), "echo ok > /vol/health");
    const healthy = await observed(sick, "running");
    await sleep(3_000);
    expect((await runtime(sick)).runtime.restarts).toBe(healthy.restarts);
  }, 90_000);

  it("stops a deactivated challenge, starts it again on activation, replaces it when its env changes", async () => {
    const post = (path: string) => t.adminFetch(path, { method: "POST", headers: t.admin });
    expect((await post(`/v1/admin/challenges/${web}/deactivate`)).status).toBe(200);
    await observed(web, "stopped");
    expect(await containerOf(docker, web)).toBeNull();
    expect((await runtime(web)).events[0]).toMatchObject({
      kind: "runtime_stopped",
      detail: { reason: "status inactive" },
    });
    expect((await proxied(web)).status).toBe(404);
    expect((await post(`/v1/admin/challenges/${web}/activate`)).status).toBe(200);
    await eventually(async () => (await proxied(web)).status === 200, 20_000, "serving again");
    const first = await containerOf(docker, web);
    const patch = await t.adminFetch(
      `/v1/admin/challenges/${web}`,
      jsonInit("PATCH", { env: { MODE: "two" } }, t.admin),
    );
    expect(patch.status).toBe(200);
    await eventually(
      async () => (await runtime(web)).events[0]?.kind === "runtime_updated",
      20_000,
      "the replacement",
    );
    const second = await containerOf(docker, web);
    expect(second?.Id).not.toBe(first?.Id);
    expect(second?.Config.Env).toContain("MODE=two");
  });

  it("takes the operator's restart as its own, and refuses it for a challenge that is not active", async () => {
    const before = await containerOf(docker, web);
    const restart = await t.adminFetch(`/v1/admin/challenges/${web}/restart`, {
      method: "POST",
      headers: t.admin,
    });
    expect(restart.status).toBe(200);
    const after = await containerOf(docker, web);
    expect(after?.Id).not.toBe(before?.Id);
    expect(after?.Config.Image).toBe(before?.Config.Image);
    expect((await runtime(web)).events[0]).toMatchObject({
      kind: "runtime_restarted",
      detail: { reason: "operator" },
    });
    // The reconciler sees the operator's container as current: it does not replace it again.
    await sleep(2_500);
    expect((await containerOf(docker, web))?.Id).toBe(after?.Id);
    const refused = await t.adminFetch(`/v1/admin/challenges/${idle}/restart`, {
      method: "POST",
      headers: t.admin,
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: "challenge_not_active" });
    expect(await containerOf(docker, idle)).toBeNull();
    const unmanaged = await t.adminFetch(`/v1/admin/challenges/${own}/restart`, {
      method: "POST",
      headers: t.admin,
    });
    expect(unmanaged.status).toBe(409);
    expect(await containerOf(docker, own)).toBeNull();
  });
});
