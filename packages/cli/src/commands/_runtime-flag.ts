import type { LocalSubtensorRuntime } from "@platform/chain/local";
import { CliError } from "./_shared.js";

// The names are written out rather than read from `@platform/chain/local`: the CLI is one bundle,
// and a static import of the local subtensor would load it (and @polkadot) at every start of
// every command. `_runtime-flag.test.ts` keeps them equal to the chain's list.

/** The runtimes `--runtime` accepts, the default first. */
export const RUNTIME_NAMES = [
  "spec424",
  "spec393",
] as const satisfies readonly LocalSubtensorRuntime[];

/** `--runtime`: which finney runtime a local subtensor serves (`platform chain local`, `dev`). */
export const runtimeFlag = {
  runtime: {
    type: "string",
    description:
      "The runtime the local subtensor serves: spec424 (default: finney's current model, epochs numbered by the SubnetEpochIndex counter) or spec393 (the block-number epoch formula validators used before spec 423); dev_upgradeRuntime moves a spec393 chain to spec424 while it runs",
    default: RUNTIME_NAMES[0],
    valueHint: RUNTIME_NAMES.join("|"),
  },
} as const;

/** The `--runtime` value checked, or a CliError naming the ones there are. */
export function runtimeOf(text: string): LocalSubtensorRuntime {
  const runtime = RUNTIME_NAMES.find((name) => name === text);
  if (!runtime) {
    throw new CliError(
      `--runtime must be one of ${RUNTIME_NAMES.join(", ")}, got ${JSON.stringify(text)}`,
    );
  }
  return runtime;
}

/** How a runtime numbers epochs, for banners. */
export function epochModelOf(runtime: LocalSubtensorRuntime): string {
  return runtime === "spec393"
    ? "epochs by the block-number formula"
    : "epochs by the SubnetEpochIndex counter";
}

/** Blocks in one epoch of a subnet of `tempo` (the formula's tempo + 1, the counter's tempo). */
export function epochBlocks(runtime: LocalSubtensorRuntime, tempo: number): number {
  return runtime === "spec393" ? tempo + 1 : tempo;
}
