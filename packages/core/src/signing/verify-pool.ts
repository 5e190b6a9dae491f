import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { parseHex, toBytes } from "./_bytes.js";
import { prepareSignedRequest } from "./_request-check.js";
import type { SignedRequestResult, VerifySignedRequestInput } from "./signed-request.js";
import { decodeSs58Account } from "./ss58.js";

// The worker is inline source (CommonJS, eval) and loads wasm-crypto by absolute path, so the
// pool works unchanged from TypeScript sources under vitest/tsx and from the tsup bundle, where
// a separate worker file would need its own build entry and a path that differs between the two.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const wasm = require(workerData.wasmCrypto);
const START = Buffer.from("<Bytes>");
const END = Buffer.from("</Bytes>");
function check([message, signature, publicKey]) {
  try {
    return wasm.sr25519Verify(signature, message, publicKey) ||
      wasm.sr25519Verify(signature, Buffer.concat([START, message, END]), publicKey);
  } catch {
    return false;
  }
}
wasm.waitReady().then((ok) => {
  if (!ok) throw new Error("@polkadot/wasm-crypto failed to initialise in a verify worker");
  parentPort.on("message", ({ ids, jobs }) => parentPort.postMessage({ ids, results: jobs.map(check) }));
  parentPort.postMessage("ready");
});
`;

type Job = [message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array];
interface Pending {
  resolve(valid: boolean): void;
  reject(error: Error): void;
  /** Unset while the job waits for the next flush. */
  slot?: Slot;
}
interface Slot {
  worker: Worker;
  inflight: number;
}

/** Options for `createVerifyPool`. */
export interface VerifyPoolOptions {
  /** Worker threads; one per available core by default. */
  size?: number;
}

/** sr25519 verification spread over worker threads; same answers as the synchronous functions. */
export interface VerifyPool {
  /** Number of worker threads. */
  readonly size: number;
  /** Same contract as `verifySignature`, off the main thread. */
  verify(message: Uint8Array | string, signatureHex: string, ss58: string): Promise<boolean>;
  /** Same contract and codes as `verifySignedRequest`, with the signature checked off the main thread. */
  verifySignedRequest(input: VerifySignedRequestInput): Promise<SignedRequestResult>;
  /** Stops the workers; verifications still in flight reject. */
  close(): Promise<void>;
}

/**
 * Starts worker threads that verify sr25519 signatures (resolves once all are ready).
 * Worth it when verification competes with other work on the main thread or when several
 * cores are free; idle workers do not keep the process alive.
 */
export async function createVerifyPool(options: VerifyPoolOptions = {}): Promise<VerifyPool> {
  const size = options.size ?? Math.max(1, availableParallelism());
  if (!Number.isInteger(size) || size < 1) throw new RangeError("pool size must be >= 1");
  const wasmCrypto = createRequire(import.meta.url).resolve("@polkadot/wasm-crypto");
  const pending = new Map<number, Pending>();
  let queue: { id: number; job: Job }[] = [];
  let nextId = 0;
  let closed = false;
  let slots: Slot[] = [];

  const spawn = (): Promise<Slot> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { wasmCrypto } });
      const slot: Slot = { worker, inflight: 0 };
      let ready = false;
      let failure: Error | undefined;
      worker.once("message", () => {
        ready = true;
        worker.on("message", ({ ids, results }: { ids: number[]; results: boolean[] }) => {
          ids.forEach((id, i) => {
            const job = pending.get(id);
            if (!job) return;
            pending.delete(id);
            if (--slot.inflight === 0) worker.unref();
            job.resolve(results[i] === true);
          });
        });
        worker.unref();
        resolve(slot);
      });
      worker.once("error", (error) => {
        failure = error;
      });
      // "exit" follows "error" and also covers a worker killed without one.
      worker.once("exit", (code) => {
        const error = failure ?? new Error(`verify worker exited with code ${code}`);
        if (!ready) reject(error);
        else if (!closed) replace(slot, error);
      });
    });

  // A dead worker takes its in-flight jobs with it; the pool replaces it and carries on.
  const replace = (dead: Slot, error: Error) => {
    slots = slots.filter((slot) => slot !== dead);
    for (const [id, job] of pending) {
      if (job.slot !== dead) continue;
      pending.delete(id);
      job.reject(error);
    }
    spawn().then(
      (fresh) => {
        if (closed) return void fresh.worker.terminate();
        slots.push(fresh);
        if (queue.length > 0) flush();
      },
      (startError: Error) => {
        if (slots.length > 0) return; // the remaining workers carry the load
        for (const job of pending.values()) job.reject(startError);
        pending.clear();
        queue = [];
      },
    );
  };

  // Jobs queued in one tick go out as one message per worker: postMessage costs more than a hash.
  const flush = () => {
    if (slots.length === 0) return; // a replacement is starting; it flushes when ready
    const batches = new Map<Slot, { ids: number[]; jobs: Job[] }>();
    for (const { id, job } of queue) {
      const slot = slots.reduce((a, b) => (b.inflight < a.inflight ? b : a));
      const batch = batches.get(slot) ?? { ids: [], jobs: [] };
      batches.set(slot, batch);
      batch.ids.push(id);
      batch.jobs.push(job);
      if (slot.inflight++ === 0) slot.worker.ref();
      const entry = pending.get(id);
      if (entry) entry.slot = slot;
    }
    queue = [];
    for (const [slot, batch] of batches) slot.worker.postMessage(batch);
  };

  const submit = (job: Job): Promise<boolean> => {
    if (closed) return Promise.reject(new Error("verify pool is closed"));
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      if (queue.push({ id, job }) === 1) queueMicrotask(flush);
    });
  };

  const started = await Promise.allSettled(Array.from({ length: size }, spawn));
  slots = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failure = started.find((r) => r.status === "rejected");
  if (failure) {
    closed = true;
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
    throw failure.reason;
  }

  return {
    size,
    verify(message, signatureHex, ss58) {
      const signature = parseHex(signatureHex, 64);
      if (!signature) return Promise.resolve(false);
      let publicKey: Uint8Array;
      try {
        publicKey = decodeSs58Account(ss58).publicKey;
      } catch {
        return Promise.resolve(false);
      }
      return submit([toBytes(message), signature, publicKey]);
    },
    async verifySignedRequest(input) {
      const prepared = prepareSignedRequest(input);
      if (!prepared.ok) return prepared;
      const valid = await submit([prepared.message, prepared.signature, prepared.publicKey]);
      return valid ? prepared.success : prepared.failure;
    },
    async close() {
      closed = true;
      const error = new Error("verify pool is closed");
      for (const job of pending.values()) job.reject(error);
      pending.clear();
      queue = [];
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}
