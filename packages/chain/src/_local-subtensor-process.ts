// A local subtensor in a process of its own, for tests whose own event loop is busy (a long
// validator run): its blocks then come on time. Started with its options as JSON in argv[2]; it
// prints one `{"ready": {...}}` line, then answers JSON-line commands on stdin
// (`{"id", "method", "params"}` -> `{"id", "result"} | {"id", "error"}`), outside its RPC server,
// so a stalled or closed server can still be driven. It stops when stdin closes.
import { createInterface } from "node:readline";
import { createLogger } from "@platform/core";
import { type LocalSubtensorOptions, startLocalSubtensor } from "./local-subtensor/index.js";

const options = JSON.parse(process.argv[2] ?? "{}") as Omit<LocalSubtensorOptions, "log">;
const node = await startLocalSubtensor({
  ...options,
  log: createLogger({
    name: "local-subtensor",
    level: (process.env.PLATFORM_LOCAL_SUBTENSOR_LOG ?? "error") as "error",
  }),
});
const send = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
send({ ready: { url: node.url, genesisHash: node.genesisHash, drand: node.drandInfo() } });

type Params = unknown[];
const methods: Record<string, (params: Params) => unknown> = {
  status: () => node.status(),
  nextBlock: () => node.nextBlock(),
  fault: ([fault]) => node.fault(fault as Parameters<typeof node.fault>[0]),
  skipDrandRound: ([round]) => node.skipDrandRound(round as number | undefined),
  registerNeuron: ([netuid, hotkey, permit]) =>
    node.registerNeuron(netuid as number, hotkey as string, permit as boolean | undefined),
  setHyperparameter: ([netuid, name, value]) =>
    node.setHyperparameter(
      netuid as number,
      name as Parameters<typeof node.setHyperparameter>[1],
      value as Parameters<typeof node.setHyperparameter>[2],
    ),
  // The spec-424 dev methods. Those queued for the next block answer with that block's number
  // (the head once they resolve), so a test knows from which block their effect holds.
  setStake: async ([netuid, hotkey, stake]) => {
    await node.setStake(netuid as number, hotkey as string, BigInt(stake as string));
    return node.status().head.number;
  },
  setSubnetOwner: async ([netuid, hotkey]) => {
    await node.setSubnetOwner(netuid as number, hotkey as string);
    return node.status().head.number;
  },
  deferEpoch: ([netuid, times]) =>
    node.deferEpoch(netuid as number, (times as number | null) ?? undefined),
  skipEpoch: ([netuid, times]) =>
    node.skipEpoch(netuid as number, (times as number | null) ?? undefined),
  triggerEpoch: ([netuid, at]) =>
    node.triggerEpoch(netuid as number, (at as number | null) ?? undefined),
  upgradeRuntime: ([runtime]) =>
    node.upgradeRuntime((runtime as Parameters<typeof node.upgradeRuntime>[0] | null) ?? undefined),
};

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const { id, method, params } = JSON.parse(line) as { id: number; method: string; params: Params };
  const run = methods[method];
  Promise.resolve()
    .then(() => {
      if (!run) throw new Error(`no method ${method}`);
      return run(params ?? []);
    })
    .then(
      (result) => send({ id, result: result ?? null }),
      (error: unknown) =>
        send({ id, error: error instanceof Error ? error.message : String(error) }),
    );
});
lines.on("close", () => {
  void node.close().finally(() => process.exit(0));
});
