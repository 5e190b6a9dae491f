import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalSubtensor, startLocalSubtensor } from "@platform/chain/local";
import { initCrypto, keypairFromMnemonic } from "@platform/core";
import { ApiPromise, WsProvider } from "@polkadot/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../../test/run-cli.js";

// Public test phrases (substrate's development phrase and two BIP-39 test vectors), never real keys.
const VALIDATOR = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
const MINER_A = "legal winner thank year wave sausage worth useful legal winner thank yellow";
const MINER_B = "letter advice cage absurd amount doctor acoustic avoid letter advice cage above";
const NETUID = 2;
/** A second subnet with commit-reveal on, as on finney. */
const CR_NETUID = 3;

// Both runtimes the validator meets: the current one (the counter epoch model, the local
// subtensor's default) and spec 393's block-number formula; each must commit, find and confirm
// its reveal under the chain's own key.
describe.each(["spec424", "spec393"] as const)(
  "platform validator on the %s runtime",
  (runtime) => {
    // The runtime decides only what the validator computes for the chain: the rest (holding, exit
    // codes, flags) is runtime-independent and runs once, on the current runtime.
    const onTheCurrentRuntime = (name: string, test: () => Promise<void>) => {
      if (runtime === "spec424") it(name, test);
    };
    let chain: LocalSubtensor;
    let master: Server;
    let masterUrl: string;
    let home: string;
    let hotkeyFile: string;
    let snapshot: Record<string, unknown>;
    const env = () => ({ PLATFORM_HOME: home, DATABASE_URL: "" });

    beforeAll(async () => {
      await initCrypto();
      const [validator, a, b] = [VALIDATOR, MINER_A, MINER_B].map((phrase) =>
        keypairFromMnemonic(phrase),
      );
      chain = await startLocalSubtensor({
        runtime,
        blockMs: 150,
        subnetDefaults: {
          CommitRevealWeightsEnabled: false,
          WeightsSetRateLimit: 0,
          MinAllowedWeights: 1,
        },
      });
      await chain.registerNeuron(NETUID, validator!.address, true);
      await chain.registerNeuron(NETUID, a!.address);
      await chain.registerNeuron(NETUID, b!.address);
      await chain.registerNeuron(CR_NETUID, validator!.address, true);
      await chain.registerNeuron(CR_NETUID, a!.address);
      await chain.registerNeuron(CR_NETUID, b!.address);
      // Tempo 10: an epoch is 11 blocks (under 2 s here), and the round a commit is locked to
      // (3 blocks into its reveal epoch) is stored well before that epoch ends.
      await chain.setHyperparameter(CR_NETUID, "CommitRevealWeightsEnabled", true);
      await chain.setHyperparameter(CR_NETUID, "Tempo", 10);
      // The master's public route, as a validator reads it: the latest snapshot (its uids are the
      // master's business; the validator maps the hotkeys itself).
      snapshot = {
        id: 7,
        computed_at: new Date().toISOString(),
        uids: [0],
        weights: [1],
        weights_u16: [65_535],
        hotkeys: { [a!.address]: 0.75, [b!.address]: 0.25, "5Unknown-not-on-chain": 0 },
        burned: false,
        sources: [],
      };
      master = createServer((request, response) => {
        if (request.url === "/v1/weights/latest") {
          response.setHeader("content-type", "application/json");
          response.end(JSON.stringify(snapshot));
        } else {
          response.statusCode = 404;
          response.end();
        }
      });
      await new Promise<void>((resolve) => master.listen(0, "127.0.0.1", resolve));
      masterUrl = `http://127.0.0.1:${(master.address() as AddressInfo).port}`;
      home = mkdtempSync(join(tmpdir(), "cli-validator-"));
      hotkeyFile = join(home, "hotkey");
      writeFileSync(
        hotkeyFile,
        JSON.stringify({ secretPhrase: VALIDATOR, ss58Address: validator!.address }),
      );
      // Let the registrations become final: the validator reads at the finalized block.
      for (let i = 0; i < 4; i++) await chain.nextBlock();
    });
    afterAll(async () => {
      await chain?.close();
      await new Promise((resolve) => master?.close(resolve));
    });

    const runOn = (netuid: number, ...extra: string[]) =>
      runCli(
        [
          "validator",
          "run",
          "--master",
          masterUrl,
          "--chain",
          chain.url,
          "--netuid",
          String(netuid),
          "--block-ms",
          "150",
          ...extra,
        ],
        { env: env() },
      );
    const run = (...extra: string[]) => runOn(NETUID, ...extra);

    it("sets the master's weights on chain with --once, confirmed from the block, and status lists it", async () => {
      const dry = await run("--hotkey", hotkeyFile, "--once", "--dry-run");
      expect(dry.code, dry.stdout + dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/dry run: would set 2 weights: \{"1":\d+,"2":\d+\}/);

      const first = await run("--hotkey", hotkeyFile, "--once");
      expect(first.code, first.stdout + first.stderr).toBe(0);
      expect(first.stdout).toMatch(/signed set_weights, extrinsic 0x[0-9a-f]{64}/);
      expect(first.stdout).toMatch(/confirmed: finalized in block #\d+ 0x[0-9a-f]{64}/);
      expect(first.stdout).toMatch(/done: weights confirmed in block #\d+/);

      const status = await runCli(["validator", "status"], { env: env() });
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/last confirmed: block #\d+ .*netuid 2, uid 0, 2 weights/);
      expect(status.stdout).toMatch(/finalized +block #\d+ 0x[0-9a-f]{64}/);
      const json = await runCli(["validator", "status", "--json"], { env: env() });
      const rows = JSON.parse(json.stdout) as {
        status: string;
        uids: number[];
        weights: number[];
      }[];
      // The miners' weights, 3:1 (the hotkey not on chain dropped), the larger max-upscaled to 65535.
      expect(rows[0]).toMatchObject({
        status: "finalized",
        uids: [1, 2],
        weights: [65_535, 21_845],
      });
    });

    onTheCurrentRuntime(
      "status reads a running validator's submissions from its status file (the database is the run's alone)",
      async () => {
        const running = spawnCli(
          [
            "validator",
            "run",
            "--master",
            masterUrl,
            "--chain",
            chain.url,
            "--netuid",
            String(NETUID),
            "--block-ms",
            "150",
            "--hotkey",
            hotkeyFile,
          ],
          { env: env() },
        );
        let out = "";
        running.stdout?.on("data", (chunk) => {
          out += chunk;
        });
        const exited = new Promise((resolve) => running.once("exit", resolve));
        try {
          // Not before the run holds its database: a status opening it first would keep the
          // run from starting. Then its own confirmed submission (the first test's is older).
          const deadline = Date.now() + 30_000;
          while (!/confirmed: finalized/.test(out)) {
            if (Date.now() > deadline) throw new Error(`the run confirmed nothing: ${out}`);
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          const status = await runCli(["validator", "status"], { env: env() });
          expect(status.code, status.stderr).toBe(0);
          expect(status.stdout).toMatch(
            new RegExp(
              `\\(the validator is running, process ${running.pid}: its submissions as of \\S+\\)`,
            ),
          );
          expect(status.stdout).toMatch(/last confirmed: block #\d+ .*netuid 2, uid 0, 2 weights/);
          const json = await runCli(["validator", "status", "--json", "--limit", "1"], {
            env: env(),
          });
          const rows = JSON.parse(json.stdout) as { status: string; uids: number[] }[];
          expect(rows).toHaveLength(1);
          expect(rows[0]?.uids).toEqual([1, 2]);
        } finally {
          running.kill("SIGTERM");
          await exited;
        }
        // Stopped, it let go of the database: status opens it again.
        const after = await runCli(["validator", "status"], { env: env() });
        expect(after.code, after.stderr).toBe(0);
        expect(after.stdout).not.toContain("validator is running");
        expect(after.stdout).toMatch(/last confirmed: block #\d+/);
      },
    );

    onTheCurrentRuntime(
      "holds the weights (exit 3) while a challenge with emission fails its collections, unless overridden",
      async () => {
        const healthy = snapshot;
        snapshot = {
          ...healthy,
          id: 8,
          sources: [
            {
              slug: "alpha",
              emission_percent: 60,
              status: "failed",
              epoch: null,
              hotkeys: 0,
              share: 0,
              error: "HTTP 500",
            },
          ],
        };
        try {
          const held = await run(
            "--hotkey",
            hotkeyFile,
            "--once",
            "--health-grace",
            "0",
            "--dry-run",
          );
          expect(held.code, held.stdout + held.stderr).toBe(3);
          expect(held.stdout + held.stderr).toMatch(/challenge alpha failed its last 1/);
          const overridden = await run(
            "--hotkey",
            hotkeyFile,
            "--once",
            "--health-grace",
            "0",
            "--override-health-gate",
            "--dry-run",
          );
          expect(overridden.code, overridden.stdout + overridden.stderr).toBe(0);
          expect(overridden.stdout).toMatch(/dry run: would set 2 weights/);
        } finally {
          snapshot = healthy;
        }
      },
    );

    onTheCurrentRuntime(
      "exits 3 inside the rate limit, naming the check and the block it is allowed from",
      async () => {
        await chain.setHyperparameter(NETUID, "WeightsSetRateLimit", 1000);
        for (let i = 0; i < 4; i++) await chain.nextBlock();
        const again = await run("--hotkey", hotkeyFile, "--once");
        expect(again.code, again.stdout + again.stderr).toBe(3);
        expect(again.stdout).toMatch(/refused: .*SettingWeightsTooFast/);
        expect(again.stdout).toMatch(/from block #?\d+/);
      },
    );

    it("commits timelocked weights on a commit-reveal subnet and waits for the confirmed reveal", async () => {
      const done = await runOn(CR_NETUID, "--hotkey", hotkeyFile, "--once");
      expect(done.code, done.stdout + done.stderr).toBe(0);
      expect(done.stdout).toMatch(/signed a commit to drand round \d+, extrinsic 0x[0-9a-f]{64}/);
      expect(done.stdout).toMatch(/committed in block #\d+ \(epoch \d+\); its reveal is due/);
      expect(done.stdout).toMatch(
        /revealed in block #\d+: the chain's weights are the committed ones/,
      );
      expect(done.stdout).toMatch(
        /done: weights committed in block #\d+ and revealed in block #\d+/,
      );
      expect(done.stdout).not.toMatch(/set_weights/);
      const json = await runCli(["validator", "status", "--json"], { env: env() });
      const rows = JSON.parse(json.stdout) as {
        kind: string;
        status: string;
        netuid: number;
        commit?: { revealRound: number; revealEpoch: number; revealBlock: { number: number } };
      }[];
      const row = rows.find((r) => r.netuid === CR_NETUID);
      expect(row).toMatchObject({ kind: "commit", status: "revealed" });
      // The round's pulse was not on chain before the reveal epoch began, as the chain ran it:
      // nobody could decrypt the weights before the chain revealed them. The reveal epoch's first
      // block is the formula's on spec 393 (tempo 10: epoch e starts at 11e - netuid - 1) and
      // LastEpochBlock on the counter.
      const commit = row?.commit;
      if (!commit) throw new Error("no commit in the status");
      const api = await ApiPromise.create({
        provider: new WsProvider(chain.url),
        noInitWarn: true,
      });
      try {
        const read = async (n: number, pallet: string, item: string, key: number) => {
          const at = await api.at(await api.rpc.chain.getBlockHash(n));
          const entry = at.query[pallet]?.[item];
          if (!entry) throw new Error(`no ${pallet}.${item} at block ${n}`);
          return (await entry(key)) as unknown as { isEmpty: boolean; toString(): string };
        };
        const revealedAt = commit.revealBlock.number;
        const firstOfReveal =
          runtime === "spec393"
            ? commit.revealEpoch * 11 - (CR_NETUID + 1)
            : Number(
                (await read(revealedAt, "subtensorModule", "lastEpochBlock", CR_NETUID)).toString(),
              );
        expect(firstOfReveal).toBeLessThanOrEqual(revealedAt);
        const pulse = await read(firstOfReveal - 1, "drand", "pulses", commit.revealRound);
        expect(
          pulse.isEmpty,
          `round ${commit.revealRound} stored before block ${firstOfReveal}`,
        ).toBe(true);
      } finally {
        await api.disconnect();
      }
    });

    onTheCurrentRuntime("status --master says when a master sets no weights on chain", async () => {
      const result = await runCli(["validator", "status", "--master", masterUrl], { env: env() });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("this master sets no weights on chain");
    });

    onTheCurrentRuntime(
      "refuses a missing chain, a bad netuid and a hotkey that cannot sign, without a stack",
      async () => {
        const cases: [string[], RegExp][] = [
          [["validator", "run", "--hotkey", hotkeyFile], /give the chain with --chain/],
          [
            ["validator", "run", "--chain", "http://x", "--netuid", "1", "--hotkey", hotkeyFile],
            /ws:\/\/ or wss:\/\//,
          ],
          [
            [
              "validator",
              "run",
              "--chain",
              "ws://127.0.0.1:1",
              "--netuid",
              "0",
              "--hotkey",
              hotkeyFile,
            ],
            /--netuid must be an integer from 1/,
          ],
          [
            [
              "validator",
              "run",
              "--chain",
              "ws://127.0.0.1:1",
              "--netuid",
              "1",
              "--hotkey",
              "./nowhere/h",
            ],
            /no hotkey file at/,
          ],
          [
            [
              "validator",
              "run",
              "--chain",
              "ws://127.0.0.1:1",
              "--netuid",
              "1",
              "--hotkey",
              "nosuchkey",
            ],
            /no key named "nosuchkey"/,
          ],
        ];
        // Each refusal is its own process that stops at its flags, before any database or
        // socket: they run side by side.
        const results = await Promise.all(cases.map(([args]) => runCli(args, { env: env() })));
        for (const [index, [args, message]] of cases.entries()) {
          const result = results[index]!;
          expect(result.code, args.join(" ")).toBe(1);
          expect(result.stderr).toMatch(message);
          expect(result.stderr).not.toMatch(/\n\s+at /);
          expect(result.stderr + result.stdout).not.toContain("bottom drive");
        }
      },
    );
  },
);
