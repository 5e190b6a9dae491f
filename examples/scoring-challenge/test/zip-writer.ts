// The scoring bundle's test ZIPs: the SDK's byte-level writer, and the smallest bundle that
// meets the contract.
import { writeZip, type ZipEntrySpec } from "@platform/challenge-sdk/testing";

export { writeZip, type ZipEntrySpec };

/** The smallest bundle that meets the contract, plus `extra` entries. */
export function minimalBundle(extra: readonly ZipEntrySpec[] = []): Buffer {
  return writeZip([
    { name: "architecture.py", data: "def build_model(ctx):\n    return None\n" },
    { name: "training.py", data: "def train(ctx):\n    pass\n" },
    ...extra,
  ]);
}
