import {
  createVerifyPool,
  type Logger,
  type SignedRequestResult,
  type VerifyPool,
  type VerifySignedRequestInput,
  verifySignedRequest,
} from "@platform/core";

/** Where the signed upload route checks signatures. */
export interface SignatureVerifier {
  /** Same verdicts and codes as core's `verifySignedRequest`. */
  check(input: VerifySignedRequestInput): Promise<SignedRequestResult>;
  /** Resolves true once checks go to a running pool, false when they stay on the main thread. */
  pooled(): Promise<boolean>;
  /** Stops the pool; later checks run on the main thread. */
  close(): Promise<void>;
}

/**
 * Signature checks on the main thread (`workers` 0), or on a pool of `workers` threads started
 * now, so the first upload does not wait for it. A pool that cannot start, or loses a worker
 * mid-check, costs a check on the main thread (logged), never a refused upload: the pool is an
 * optimisation, not part of the contract.
 */
export function createSignatureVerifier(workers: number, log: Logger): SignatureVerifier {
  if (workers <= 0) {
    return {
      check: async (input) => verifySignedRequest(input),
      pooled: async () => false,
      close: async () => {},
    };
  }
  let closed = false;
  const pool: Promise<VerifyPool | undefined> = createVerifyPool({ size: workers }).catch(
    (error: unknown) => {
      log.warn("verify pool could not start; upload signatures are checked on the main thread", {
        error,
      });
      return undefined;
    },
  );
  return {
    async check(input) {
      const ready = closed ? undefined : await pool;
      if (!ready) return verifySignedRequest(input);
      try {
        return await ready.verifySignedRequest(input);
      } catch (error) {
        if (!closed) log.warn("verify pool failed a check; redone on the main thread", { error });
        return verifySignedRequest(input);
      }
    },
    pooled: async () => !closed && (await pool) !== undefined,
    async close() {
      closed = true;
      await (await pool)?.close();
    },
  };
}
