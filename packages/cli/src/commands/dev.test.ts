import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli, waitForOutput } from "../../test/run-cli.js";
import type { DevReady } from "./dev.js";

const repo = fileURLToPath(new URL("../../../../", import.meta.url));
const templateModule = join(repo, "templates", "challenge", "src", "challenge.ts");
const READY = /^\{"status":"ready".*\}$/m;

const children = new Set<ChildProcess>();
afterAll(async () => {
  // A failed assertion must not leave a master running.
  for (const child of children) {
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      await once(child, "close");
    }
  }
});

async function startDev(args: string[], options: { cwd: string; env: Record<string, string> }) {
  const child = spawnCli(["dev", "--port", "0", "--json", ...args], options);
  children.add(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  const [line] = await waitForOutput(child, READY, 120_000);
  return { child, ready: JSON.parse(line) as DevReady, stderr: () => stderr };
}

async function stop(child: ChildProcess): Promise<number | null> {
  child.kill("SIGTERM");
  const [code] = await once(child, "close");
  return code as number | null;
}

const getJson = async (url: string, init?: RequestInit) => {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe("platform dev", () => {
  it("runs a master with the template's challenge behind it: signed upload, status, scoring and weights", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cli-dev-"));
    const env = {
      PLATFORM_HOME: mkdtempSync(join(tmpdir(), "cli-dev-home-")),
      ADMIN_TOKEN: "",
      ADMIN_TOKEN_FILE: "",
      DATABASE_URL: "",
      PLATFORM_MASTER_URL: "",
    };
    const key = await runCli(["keys", "new", "--json"], { env });
    expect(key.code).toBe(0);
    const hotkey = (JSON.parse(key.stdout) as { ss58Address: string }).ss58Address;

    const { child, ready, stderr } = await startDev(["--challenge", templateModule], { cwd, env });
    const master = ready.master_url;
    expect(ready.admin_token).toMatch(/^adm_/);
    expect(ready.data_dir).toBe(join(cwd, ".platform", "dev"));
    expect(existsSync(join(ready.data_dir, "master", "pglite"))).toBe(true);
    expect(ready.challenges).toHaveLength(1);
    const [challenge] = ready.challenges;
    expect(challenge).toMatchObject({
      slug: "shortest-tour",
      module: templateModule,
      proxy_url: `${master}/challenges/shortest-tour`,
    });
    expect(stderr()).toContain("[platform dev] registering shortest-tour with the master");
    expect(stderr()).toContain("[platform dev] shortest-tour is active");

    // The public registry lists it active, with the address the challenge listens on.
    const registry = await getJson(`${master}/v1/registry`);
    expect(registry.body["challenges"]).toEqual([
      expect.objectContaining({
        slug: "shortest-tour",
        status: "active",
        internal_base_url: challenge!.internal_url,
        public_proxy_base_path: "/challenges/shortest-tour",
      }),
    ]);

    // A miner reads the task through the master's proxy and uploads a tour with the real CLI.
    const task = await getJson(`${challenge!.proxy_url}/v1/task`);
    expect(task.status).toBe(200);
    const cities = task.body["cities"] as unknown[];
    const file = join(cwd, "tour.json");
    writeFileSync(
      file,
      JSON.stringify({ task_id: task.body["task_id"], tour: cities.map((_, i) => i) }),
    );
    const submitted = await runCli(
      ["submit", "shortest-tour", file, "--master", master, "--json"],
      { env },
    );
    expect(submitted.stderr).toBe("");
    expect(submitted.code).toBe(0);
    const { id } = JSON.parse(submitted.stdout) as { id: number; status: string };
    expect(JSON.parse(submitted.stdout)).toMatchObject({ status: "pending" });

    // The challenge's worker scores it; `platform status` reads it back through the master.
    const status = await runCli(
      [
        "status",
        "shortest-tour",
        String(id),
        "--master",
        master,
        "--watch",
        "--interval",
        "1",
        "--json",
      ],
      { env },
    );
    expect(status.code).toBe(0);
    const record = JSON.parse(status.stdout) as Record<string, unknown>;
    expect(record).toMatchObject({ id, hotkey, status: "completed", via: "bridge", error: null });
    expect(record["final_score"]).toBe(1);

    // The tokens the master minted are the ones the challenge checks; the proxy keeps /internal private.
    const internal = {
      authorization: `Bearer ${challenge!.challenge_token}`,
      "x-platform-challenge-slug": "shortest-tour",
    };
    const next = await getJson(`${challenge!.internal_url}/internal/v1/worker/process-next`, {
      method: "POST",
      headers: internal,
    });
    expect(next).toEqual({ status: 200, body: { processed: false } });
    const blocked = await fetch(`${challenge!.proxy_url}/internal/v1/worker/process-next`, {
      method: "POST",
      headers: internal,
    });
    expect(blocked.status).toBe(403);

    // A weights collection now pays the hotkey.
    // The admin API is on the admin listener, never on the public one with the challenges.
    expect(ready.admin_url).toBe(`${ready.master_admin_url}/admin`);
    expect(ready.master_admin_url).not.toBe(master);
    const onPublic = await fetch(`${master}/v1/admin/weights/collect`, {
      method: "POST",
      headers: { "x-admin-token": ready.admin_token },
    });
    expect(onPublic.status).toBe(404);
    const collect = await fetch(`${ready.master_admin_url}/v1/admin/weights/collect`, {
      method: "POST",
      headers: { "x-admin-token": ready.admin_token },
    });
    expect(collect.status).toBe(200);
    // The master reads uids from dev's local chain, where the hotkey is registered once the
    // challenge scored it (a poll every 2 s, then finality): until then the snapshot leaves it out.
    let latest = await getJson(`${master}/v1/weights/latest`);
    for (let i = 0; i < 30 && !(hotkey in (latest.body["hotkeys"] as object)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await fetch(`${ready.master_admin_url}/v1/admin/weights/collect`, {
        method: "POST",
        headers: { "x-admin-token": ready.admin_token },
      });
      latest = await getJson(`${master}/v1/weights/latest`);
    }
    expect(latest.body["hotkeys"]).toEqual({ [hotkey]: 1 });
    expect(latest.body["sources"]).toEqual([
      expect.objectContaining({ slug: "shortest-tour", status: "ok", emission_percent: 100 }),
    ]);

    // The local chain: the scored hotkey gets a uid there, and the master's validator commits its
    // weight (commit-reveal is on, as on finney), confirmed once the chain revealed it
    // (collections every 30 s: ask for them).
    expect(ready.chain).toMatchObject({
      netuid: 1,
      commit_reveal: true,
      weights_url: `${master}/v1/weights/chain`,
    });
    let onChain: {
      uid?: number | null;
      last_confirmed: {
        kind: string;
        uids: number[];
        block: { number: number };
        commit_block?: { number: number };
      } | null;
    } = {
      last_confirmed: null,
    };
    for (let i = 0; i < 90; i++) {
      await fetch(`${ready.master_admin_url}/v1/admin/weights/collect`, {
        method: "POST",
        headers: { "x-admin-token": ready.admin_token },
      });
      onChain = (await getJson(`${master}/v1/weights/chain?hotkey=${hotkey}`))
        .body as typeof onChain;
      if (typeof onChain.uid === "number" && onChain.last_confirmed?.uids.includes(onChain.uid))
        break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(onChain.last_confirmed?.uids, JSON.stringify(onChain)).toContain(onChain.uid);
    // A commit, revealed in a later block than the one that included it.
    expect(onChain.last_confirmed?.kind).toBe("commit");
    expect(onChain.last_confirmed?.commit_block?.number).toBeLessThan(
      onChain.last_confirmed?.block.number ?? 0,
    );
    // And platform dev said so as it happened: the commit, then its reveal.
    for (let i = 0; i < 10 && !/revealed in block #\d+ from the commit/.test(stderr()); i++)
      await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(stderr()).toMatch(/\[platform dev\] chain: the validator's commit is committed/);
    expect(stderr()).toMatch(
      /\[platform dev\] chain: weights for \d+ uid\(s\) revealed in block #\d+ from the commit in block #\d+ \(drand round \d+\)/,
    );
    const validatorStatus = await runCli(["validator", "status", "--master", master], { env });
    expect(validatorStatus.stdout).toContain(
      `netuid 1, validator ${ready.chain!.validator_hotkey}`,
    );
    expect(validatorStatus.stdout).toMatch(/last confirmed: block #\d+/);

    expect(await stop(child)).toBe(0);
    expect(stderr()).toContain("[platform dev] received SIGTERM, stopping");
    expect(stderr()).toContain("[platform dev] stopped");
    expect((await fetch(`${master}/health`).catch(() => null))?.status).toBeUndefined();
  }, 240_000);

  it("inside a project runs its ./src/challenge.ts; on a kept --data-dir it rotates the tokens", async () => {
    mkdirSync(join(repo, ".platform", "tmp"), { recursive: true });
    const root = mkdtempSync(join(repo, ".platform", "tmp", "dev-project-"));
    try {
      const project = join(root, "dev-proj");
      const created = await runCli(["challenge", "create", "dev-proj", "--out", project]);
      expect(created.code).toBe(0);
      const dataDir = join(root, "data");
      const env = {
        ADMIN_TOKEN: "dev-test-admin-token-0123456789",
        ADMIN_TOKEN_FILE: "",
        DATABASE_URL: "",
      };

      const first = await startDev(["--data-dir", dataDir], { cwd: project, env });
      expect(first.ready.admin_token).toBe(env.ADMIN_TOKEN);
      expect(first.ready.challenges.map((c) => [c.slug, c.module])).toEqual([
        ["dev-proj", join(project, "src", "challenge.ts")],
      ]);
      const oldToken = first.ready.challenges[0]!.challenge_token;
      expect(await stop(first.child)).toBe(0);

      const second = await startDev(["--data-dir", dataDir], { cwd: project, env });
      expect(second.stderr()).toContain(
        "dev-proj was registered by an earlier run: its tokens were rotated",
      );
      const [again] = second.ready.challenges;
      expect(again!.challenge_token).not.toBe(oldToken);
      const slugHeader = { "x-platform-challenge-slug": "dev-proj" };
      const withOld = await fetch(`${again!.internal_url}/internal/v1/get_weights`, {
        headers: { ...slugHeader, authorization: `Bearer ${oldToken}` },
      });
      expect(withOld.status).toBe(401);

      // One record, active at the new address, collected with the new token.
      const admin = { "x-admin-token": env.ADMIN_TOKEN };
      const list = await getJson(`${second.ready.master_admin_url}/v1/admin/challenges`, {
        headers: admin,
      });
      expect(list.body["challenges"]).toEqual([
        expect.objectContaining({
          slug: "dev-proj",
          status: "active",
          internal_base_url: again!.internal_url,
        }),
      ]);
      const collected = await getJson(`${second.ready.master_admin_url}/v1/admin/weights/collect`, {
        method: "POST",
        headers: admin,
      });
      expect(collected.body["sources"]).toEqual([
        expect.objectContaining({ slug: "dev-proj", status: "empty" }),
      ]);
      // A second `platform dev` on the same data dir is refused before it touches anything.
      const clash = await runCli(["dev", "--port", "0", "--data-dir", dataDir], {
        cwd: project,
        env,
      });
      expect(clash.code).toBe(1);
      expect(clash.stderr).toContain("is in use by another platform dev");
      expect((await fetch(`${second.ready.master_url}/health`)).status).toBe(200);
      expect(await stop(second.child)).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 300_000);

  it("refuses a bad --port, a port in use and a --challenge that does not exist, with exit 1", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cli-dev-"));
    const port = await runCli(["dev", "--port", "http"], { cwd });
    expect(port.code).toBe(1);
    expect(port.stderr).toContain("--port must be a port number");
    // A lock left by a process that is gone (killed) does not block the next run.
    const kept = join(cwd, "kept");
    mkdirSync(kept);
    writeFileSync(join(kept, "platform-dev.pid"), "2147483646\n");
    const missing = await runCli(
      ["dev", "--port", "0", "--data-dir", kept, "--challenge", "nope.ts"],
      { cwd },
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("--challenge nope.ts: no such file");
    expect(missing.stderr).not.toMatch(/\n\s+at /);

    // A port in use is a sentence, and nothing is left running.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port: busy } = taken.address() as AddressInfo;
    try {
      const result = await runCli(["dev", "--port", String(busy), "--challenge", templateModule], {
        cwd,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`127.0.0.1:${busy} is in use`);
      expect(existsSync(join(cwd, ".platform", "dev", "platform-dev.pid"))).toBe(false);
    } finally {
      taken.close();
    }
  }, 90_000);
});
