// One realistic signed request shared by the verification figures, so they measure the same work.
import { canonicalRequestMessage, initCrypto, keypairFromSeed, signMessage } from "@platform/core";

export async function signedFixture() {
  await initCrypto();
  const pair = keypairFromSeed(`0x${"5a".repeat(32)}`);
  const message = canonicalRequestMessage({
    method: "POST",
    path: "/challenges/agent-eval/submissions",
    slug: "agent-eval",
    timestamp: 1795262400,
    nonce: "bench-nonce-0123456789",
    body: "x".repeat(2048),
  });
  return { address: pair.address, message, signature: signMessage(pair, message) };
}
