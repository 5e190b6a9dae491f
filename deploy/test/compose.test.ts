// The deployment to copy (deploy/docker-compose.yml), brought up on this machine's Docker engine
// with docker-compose, as an operator would: the images deploy/build-images.sh made, secrets as
// files, the master's Docker socket. Checks what docs/deploying.md promises: /readyz, the admin
// listener on loopback only, a registered challenge answering through the proxy, the validator
// profile setting the master's weights on a local subtensor (step 8, checked on chain), no secret
// in the containers' configuration or logs, and a dump restored into a wiped database. Needs
// docker-compose, platform/master:local, platform/postgres:local and the test challenge image;
// without them it is skipped, loudly, and under CI it fails.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type LocalSubtensor, startLocalSubtensor } from "@platform/chain/local";
import { createLogger, initCrypto, keypairFromMnemonic } from "@platform/core";
import { isCi } from "@platform/core/testing";
import { ApiPromise, WsProvider } from "@polkadot/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHALLENGE_IMAGE,
  DEPLOY,
  dockerBridgeAddress,
  eventually,
  freePort,
  freshSecrets,
  imagesMissing,
  PAGE,
  run,
  writeSecrets,
} from "./_deploy-test-kit.js";

const COMPOSE_FILE = join(DEPLOY, "docker-compose.yml");
// Public test phrases (substrate's development phrase and a BIP-39 test vector), never real keys.
const VALIDATOR_PHRASE = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
const MINER_PHRASE = "legal winner thank year wave sausage worth useful legal winner thank yellow";
const NETUID = 2;

/** A challenge run outside the master (`metadata.managed: false`): its get_weights only. */
async function serveWeights(host: string, slug: string, weights: Record<string, number>) {
  const server = createServer((request, response) => {
    if (request.url !== "/internal/v1/get_weights") {
      response.statusCode = 404;
      response.end();
      return;
    }
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ challenge_slug: slug, epoch: null, weights }));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}

/** Why the suite cannot run here, or null when it can. */
function missing(): string | null {
  if (spawnSync("docker-compose", ["version"]).status !== 0)
    return "docker-compose is not installed (.ci/run installs Debian's)";
  if (spawnSync("docker", ["info"]).status !== 0) return "no Docker engine answers";
  return imagesMissing();
}

const why = missing();
if (why && !isCi()) {
  const bar = "!".repeat(78);
  console.warn(
    `\n${bar}\n!! the Compose deployment test SKIPPED: ${why}\n!! CI fails instead.\n${bar}\n`,
  );
}

describe.skipIf(why !== null && !isCi())(
  "the Compose deployment (deploy/docker-compose.yml)",
  () => {
    const id = randomBytes(4).toString("hex");
    const project = `platform-deploy-${id}`;
    const slug = `deploy-${id}`;
    const weightsSlug = `weights-${id}`;
    const secrets: Record<string, string> & ReturnType<typeof freshSecrets> = freshSecrets();
    let dir: string;
    let env: NodeJS.ProcessEnv;
    let publicUrl: string;
    let adminUrl: string;
    // A local subtensor and the weights challenge on Docker's bridge: the containers reach them
    // as host.docker.internal (the Compose file's host-gateway), this process at `reach`.
    const bridge = dockerBridgeAddress();
    const reach = bridge === "0.0.0.0" ? "127.0.0.1" : bridge;
    let chain: LocalSubtensor | undefined;
    let weightsServer: Server | undefined;
    let validator: string;
    let miner: string;

    const compose = (args: string[], input?: Buffer) =>
      run("docker-compose", ["-p", project, "-f", COMPOSE_FILE, ...args], env, input);
    const composeOk = async (args: string[], input?: Buffer) => {
      const result = await compose(args, input);
      if (result.code !== 0)
        throw new Error(`docker-compose ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
      return result;
    };
    const admin = (path: string, init: RequestInit = {}) =>
      fetch(`${adminUrl}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${secrets.admin_token}`,
          "content-type": "application/json",
        },
      });
    const ready = () =>
      eventually("the master's /readyz answered 200", 180_000, async () => {
        const response = await fetch(`${publicUrl}/readyz`);
        const body = await response.text();
        if (response.status !== 200) throw new Error(`${response.status} ${body}`);
        return JSON.parse(body) as { status: string; checks: Record<string, unknown> };
      }).catch(async (error: Error) => {
        const logs = await compose(["logs", "--no-color", "--tail", "40"]);
        throw new Error(`${error.message}\n${logs.stdout.toString()}`);
      });
    const page = () =>
      eventually("the challenge answered through the proxy", 60_000, async () => {
        const response = await fetch(`${publicUrl}/challenges/${slug}/hello.txt`);
        const body = await response.text();
        if (response.status !== 200) throw new Error(`${response.status} ${body}`);
        return body;
      });
    const listed = async () => {
      const response = await fetch(`${publicUrl}/v1/registry`);
      const body = (await response.json()) as { challenges: { slug: string }[] };
      return body.challenges.map((c) => c.slug);
    };

    beforeAll(async () => {
      if (why) throw new Error(`CI but the Compose deployment cannot run: ${why}`);
      await initCrypto();
      [validator, miner] = [VALIDATOR_PHRASE, MINER_PHRASE].map(
        (phrase) => keypairFromMnemonic(phrase).address,
      ) as [string, string];
      chain = await startLocalSubtensor({
        host: bridge,
        blockMs: 250,
        log: createLogger({ name: "local-subtensor", level: "error", write: () => {} }),
        // set_weights straight away (commit-reveal is the chain's business, tested in packages/).
        subnetDefaults: {
          CommitRevealWeightsEnabled: false,
          WeightsSetRateLimit: 0,
          MinAllowedWeights: 1,
        },
      });
      await chain.registerNeuron(NETUID, validator, true);
      await chain.registerNeuron(NETUID, miner);
      weightsServer = await serveWeights(bridge, weightsSlug, { [miner]: 1 });
      // The validator's hotkey as a Bittensor wallet hotkey file (docs/deploying.md, step 3).
      secrets.validator_hotkey = JSON.stringify({
        secretPhrase: VALIDATOR_PHRASE,
        ss58Address: validator,
      });
      const written = await writeSecrets("platform-deploy-", secrets);
      dir = written.dir;
      const [publicPort, adminPort] = [await freePort(), await freePort()];
      publicUrl = `http://127.0.0.1:${publicPort}`;
      adminUrl = `http://127.0.0.1:${adminPort}`;
      env = {
        ...process.env,
        ...written.env,
        PLATFORM_PUBLIC_PORT: String(publicPort),
        PLATFORM_ADMIN_PUBLISH_PORT: String(adminPort),
        PLATFORM_DOCKER_NETWORK: project,
        PLATFORM_IMAGE_ALLOWLIST: "platform-test/",
        // deploy/.env as docs/deploying.md step 4 writes it, pointed at the local subtensor.
        PLATFORM_CHAIN_ENDPOINTS: `ws://host.docker.internal:${chain.port}`,
        PLATFORM_NETUID: String(NETUID),
        PLATFORM_METAGRAPH: "chain",
        COMPOSE_PROJECT_NAME: project,
        COMPOSE_FILE,
      };
      await composeOk(["up", "-d"]);
    }, 120_000);

    afterAll(async () => {
      if (env) {
        // The challenge's container is the master's, not Compose's: it holds the network. The
        // master first, or its reconciler starts the container again in between.
        await compose(["stop", "--timeout", "5", "master"]);
        await run("docker", ["rm", "-f", `platform-challenge-${slug}`], env);
        const down = ["down", "--volumes", "--remove-orphans", "--timeout", "5"];
        await compose(["--profile", "validator", ...down]);
        rmSync(dir, { recursive: true, force: true });
      }
      await new Promise((resolve) =>
        weightsServer ? weightsServer.close(resolve) : resolve(null),
      );
      await chain?.close();
    }, 120_000);

    it("comes up ready: the database, the registry and the Docker engine through the socket", async () => {
      const report = await ready();
      expect(report.status).toBe("ok");
      expect(Object.keys(report.checks)).toEqual(
        expect.arrayContaining(["database", "registry", "docker"]),
      );
      const health = await (await fetch(`${adminUrl}/health`)).json();
      expect(health).toMatchObject({ status: "ok", database: "postgres" });
    }, 200_000);

    it("publishes the admin listener on 127.0.0.1 only, and the database on no port", async () => {
      const inspect = async (service: string) => {
        const ids = (await composeOk(["ps", "-q", service])).stdout.toString().trim();
        const out = await run("docker", ["inspect", ids], env);
        return JSON.parse(out.stdout.toString())[0] as {
          NetworkSettings: { Ports: Record<string, { HostIp: string; HostPort: string }[] | null> };
          Config: { Env: string[] };
        };
      };
      const master = await inspect("master");
      const bindings = master.NetworkSettings.Ports["8081/tcp"] ?? [];
      expect(bindings.length).toBeGreaterThan(0);
      for (const binding of bindings) expect(binding.HostIp).toBe("127.0.0.1");
      const postgres = await inspect("postgres");
      for (const bound of Object.values(postgres.NetworkSettings.Ports)) expect(bound).toBeNull();
      // The admin routes answer there, behind the token.
      expect((await fetch(`${adminUrl}/v1/admin/challenges`)).status).toBe(401);
      expect((await admin("/v1/admin/challenges")).status).toBe(200);
    });

    it("serves a registered, active challenge through the proxy", async () => {
      const created = await admin("/v1/admin/challenges", {
        method: "POST",
        body: JSON.stringify({
          slug,
          name: "Deployment test",
          image: CHALLENGE_IMAGE,
          version: "1",
          emission_percent: 10,
          status: "active",
        }),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      // The master starts the container (until its reconciler does on its own: issue 33).
      const restarted = await admin(`/v1/admin/challenges/${slug}/restart`, { method: "POST" });
      expect(restarted.status, await restarted.clone().text()).toBe(200);
      expect(await page()).toBe(`${PAGE}\n`);
      expect(await listed()).toContain(slug);
    }, 120_000);

    it("runs the validator profile: the master's weights set on chain by the validator's hotkey (step 8)", async () => {
      // A challenge with weights (run outside the master: it starts no container for it).
      const created = await admin("/v1/admin/challenges", {
        method: "POST",
        body: JSON.stringify({
          slug: weightsSlug,
          name: "Deployment weights",
          image: CHALLENGE_IMAGE,
          version: "1",
          emission_percent: 90,
          status: "active",
          internal_base_url: `http://host.docker.internal:${(weightsServer?.address() as AddressInfo | undefined)?.port}`,
          metadata: { managed: false },
        }),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const collected = await admin("/v1/admin/weights/collect", { method: "POST", body: "{}" });
      expect(collected.status, await collected.clone().text()).toBe(200);
      // Step 8 as written: the snapshot, then the validator profile.
      const latest = (await (await fetch(`${publicUrl}/v1/weights/latest`)).json()) as {
        hotkeys: Record<string, number>;
      };
      expect(latest.hotkeys[miner]).toBeGreaterThan(0);
      const api = await ApiPromise.create({
        provider: new WsProvider(`ws://${reach}:${chain?.port}`),
        noInitWarn: true,
      });
      try {
        await composeOk(["--profile", "validator", "up", "-d"]);
        const validatorLogs = async () =>
          (
            await compose([
              "--profile",
              "validator",
              "logs",
              "--no-color",
              "--tail",
              "30",
              "validator",
            ])
          ).stdout.toString();

        // The chain's word first: the Weights of the validator's uid (0) are the snapshot's, the
        // miner (uid 1) max-upscaled (the page challenge's tenth, which it cannot collect, is
        // burned to uid 0).
        const onChain = await eventually("the validator's weights on chain", 90_000, async () => {
          const weights = await api.query["subtensorModule"]?.["weights"]?.(NETUID, 0);
          const pairs = weights?.toJSON() as [number, number][] | undefined;
          if (!pairs?.length) throw new Error("no weights for uid 0 yet");
          return pairs;
        }).catch(async (error: Error) => {
          throw new Error(`${error.message}\n${await validatorLogs()}`);
        });
        // (Without the page challenge of the test before, the whole vector is the miner's.)
        expect(onChain).toEqual(expect.arrayContaining([[1, 65_535]]));

        // The validator's own record, read in its running container (from status.json: the run
        // holds its embedded database), as step 8 shows it.
        const status = await eventually("platform validator status showed it", 30_000, async () => {
          const out = await compose([
            "exec",
            "-T",
            "validator",
            "platform",
            "validator",
            "status",
            "--data-dir",
            "/var/lib/platform/validator",
          ]);
          const text = out.stdout.toString();
          if (!/last confirmed: block #\d+/.test(text)) throw new Error(`${out.stderr}${text}`);
          return text;
        });
        expect(status).toMatch(/^\(the validator is running, process \d+: its submissions as of /);
        expect(status).toMatch(
          new RegExp(`last confirmed: block #\\d+ .*netuid 2, uid 0, ${onChain.length} weights`),
        );
        const row = /set finalized\s+block #(\d+) (0x[0-9a-f]{64})/.exec(status);
        expect(row, status).not.toBeNull();
        const [, blockNumber, extrinsicHash] = row as unknown as [string, string, string];

        // And that confirmation is the chain's: the block holds that set_weights, signed by the
        // validator's hotkey.
        const hash = await api.rpc.chain.getBlockHash(Number(blockNumber));
        const block = await api.rpc.chain.getBlock(hash);
        const extrinsic = block.block.extrinsics.find((e) => e.hash.toHex() === extrinsicHash);
        expect(extrinsic, `extrinsic ${extrinsicHash} in block #${blockNumber}`).toBeDefined();
        expect(extrinsic?.signer.toString()).toBe(validator);
        expect(`${extrinsic?.method.section}.${extrinsic?.method.method}`).toBe(
          "subtensorModule.setWeights",
        );
      } finally {
        await api.disconnect();
      }

      // The master's chain view: the metagraph it read, where the miner is uid 1.
      const view = (await (
        await fetch(`${publicUrl}/v1/weights/chain?hotkey=${miner}`)
      ).json()) as {
        netuid: number;
        uid: number | null;
        metagraph: { hotkeys: number } | null;
      };
      expect(view).toMatchObject({ netuid: NETUID, uid: 1, metagraph: { hotkeys: 2 } });
    }, 180_000);

    it("keeps every secret out of the containers' configuration and logs", async () => {
      const values = [
        secrets.admin_token,
        secrets.master_key,
        secrets.postgres_password,
        VALIDATOR_PHRASE,
      ];
      for (const service of ["master", "postgres", "backup", "validator"]) {
        const ps = ["--profile", "validator", "ps", "-q", service];
        const ids = (await composeOk(ps)).stdout.toString().trim();
        const config = (await run("docker", ["inspect", ids], env)).stdout.toString();
        const logs = await run("docker", ["logs", ids], env);
        for (const value of values) {
          expect(config, `${service}'s configuration`).not.toContain(value);
          expect(logs.stdout.toString() + logs.stderr, `${service}'s log`).not.toContain(value);
        }
      }
    });

    it("refuses a file that is not a dump, before it stops anything", async () => {
      const junk = join(dir, "junk.dump");
      writeFileSync(junk, "not a dump\n");
      const refused = await run(join(DEPLOY, "restore.sh"), [junk], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("is not a pg_dump archive");
      const running = (await composeOk(["ps", "--services", "--filter", "status=running"])).stdout;
      expect(running.toString().split("\n")).toEqual(expect.arrayContaining(["master", "backup"]));
      expect(await page()).toBe(`${PAGE}\n`);
    }, 60_000);

    it("restores a scheduled dump into a wiped database: the registry survives", async () => {
      // A dump, as the schedule makes them, copied off the backups volume.
      const made = await composeOk(["exec", "-T", "backup", "platform-backup", "once"]);
      const path = made.stdout.toString().trim().split("\n").pop() ?? "";
      expect(path).toMatch(/^\/backups\/platform-\d{8}T\d{6}Z\.dump$/);
      const dump = (await composeOk(["exec", "-T", "backup", "cat", path])).stdout;
      expect(dump.subarray(0, 5).toString()).toBe("PGDMP");
      const file = join(dir, "platform.dump");
      writeFileSync(file, dump);

      // Wipe: the database's volume goes, a new empty cluster is made from the secret.
      await composeOk(["stop", "master", "backup", "postgres"]);
      await composeOk(["rm", "-f", "postgres"]);
      const removed = await run("docker", ["volume", "rm", `${project}_pgdata`], env);
      expect(removed.code, removed.stderr).toBe(0);
      await composeOk(["up", "-d"]);
      await ready();
      expect(await listed()).not.toContain(slug);
      const gone = await fetch(`${publicUrl}/challenges/${slug}/hello.txt`);
      expect(gone.status).toBe(404);

      const restored = await run(join(DEPLOY, "restore.sh"), [file], env);
      expect(restored.code, restored.stderr).toBe(0);
      await ready();
      expect(await listed()).toContain(slug);
      // Its record came back whole: the proxy finds its container again.
      expect(await page()).toBe(`${PAGE}\n`);
      const view = await admin(`/v1/admin/challenges/${slug}`);
      expect(await view.json()).toMatchObject({ slug, status: "active", image: CHALLENGE_IMAGE });
    }, 300_000);
  },
);
