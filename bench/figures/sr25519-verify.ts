// Figure 1: the wasm fast path against @polkadot/util-crypto's generic signatureVerify, both
// given the same message, hex signature and ss58 address, one thread.

import { decodeSs58, verifySignature } from "@platform/core";
import { signatureVerify } from "@polkadot/util-crypto";
import { sr25519Verify } from "@polkadot/wasm-crypto";
import { type Figure, median, round, syncRate } from "../_figure.js";
import { signedFixture } from "./_fixture.js";

export const sr25519VerifyFigure: Figure = {
  name: "sr25519-verify",
  async run() {
    const { address, message, signature } = await signedFixture();
    const bytes = new TextEncoder().encode(message);
    const sigBytes = new Uint8Array(Buffer.from(signature.slice(2), "hex"));
    const publicKey = decodeSs58(address);
    const fast = () => {
      if (!verifySignature(message, signature, address)) throw new Error("fast path rejected");
    };
    const baseline = () => {
      if (!signatureVerify(message, signature, address).isValid)
        throw new Error("baseline rejected");
    };
    const raw = () => sr25519Verify(sigBytes, bytes, publicKey);
    syncRate(fast, 500); // warm-up: JIT and the optimising wasm tier
    syncRate(baseline, 300);
    const fastRates: number[] = [];
    const baselineRates: number[] = [];
    const rawRates: number[] = [];
    // Interleaved short rounds, median kept: this 2-vCPU machine's speed drifts by 2x.
    for (let round = 0; round < 5; round++) {
      fastRates.push(syncRate(fast, 400));
      baselineRates.push(syncRate(baseline, 400));
      rawRates.push(syncRate(raw, 200));
    }
    const fastPerS = median(fastRates);
    const baselinePerS = median(baselineRates);
    return {
      baseline: "signatureVerify (@polkadot/util-crypto 14)",
      ratio: round(fastPerS / baselinePerS, 2),
      fast_path_per_s: round(fastPerS),
      baseline_per_s: round(baselinePerS),
      raw_wasm_verify_per_s: round(median(rawRates)),
    };
  },
};
