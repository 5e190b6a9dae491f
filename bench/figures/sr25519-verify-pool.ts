// Figure 1b: the worker pool on every core against the single-thread fast path, same inputs.
import { availableParallelism } from "node:os";
import { createVerifyPool, verifySignature } from "@platform/core";
import { asyncRate, type Figure, median, round, syncRate } from "../_figure.js";
import { signedFixture } from "./_fixture.js";

export const sr25519VerifyPoolFigure: Figure = {
  name: "sr25519-verify-pool",
  async run() {
    const { address, message, signature } = await signedFixture();
    const pool = await createVerifyPool();
    try {
      const single = () => {
        if (!verifySignature(message, signature, address)) throw new Error("rejected");
      };
      const pooled = async () => {
        if (!(await pool.verify(message, signature, address))) throw new Error("rejected");
      };
      // Fresh threads start on V8's baseline wasm tier; warm both sides before measuring.
      syncRate(single, 500);
      await asyncRate(pooled, 1000, 64);
      const singleRates: number[] = [];
      const poolRates: number[] = [];
      // Interleaved short rounds, median kept: this 2-vCPU machine's speed drifts by 2x.
      for (let round = 0; round < 5; round++) {
        singleRates.push(syncRate(single, 400));
        poolRates.push(await asyncRate(pooled, 400, 64));
      }
      const singlePerS = median(singleRates);
      const poolPerS = median(poolRates);
      return {
        baseline: "verifySignature on the main thread (wasm fast path)",
        ratio: round(poolPerS / singlePerS, 2),
        pool_per_s: round(poolPerS),
        single_thread_per_s: round(singlePerS),
        workers: pool.size,
        cores: availableParallelism(),
      };
    } finally {
      await pool.close();
    }
  },
};
