import type { Sr25519Keypair } from "@platform/core";
import { loadKey, readBittensorHotkey } from "./_keystore.js";

/** Flags that pick the miner's hotkey and the master. */
export const minerFlags = {
  master: {
    type: "string",
    description: "Master URL (default: PLATFORM_MASTER_URL, else http://127.0.0.1:8080)",
    valueHint: "url",
  },
  key: {
    type: "string",
    description: "Saved key to sign with (platform keys list)",
    default: "default",
  },
  "bittensor-wallet": {
    type: "string",
    description: "Sign with this Bittensor wallet's hotkey instead of a saved key",
    valueHint: "wallet",
  },
  hotkey: {
    type: "string",
    description: "Hotkey name in the Bittensor wallet",
    default: "default",
  },
} as const;

/** The master's base URL from the flag, the environment, or the local default. */
export function masterUrl(flag: string | undefined): string {
  return (flag || process.env.PLATFORM_MASTER_URL || "http://127.0.0.1:8080").replace(/\/+$/, "");
}

/** The keypair the flags name. */
export async function minerKey(args: {
  key?: string;
  "bittensor-wallet"?: string;
  hotkey?: string;
}): Promise<Sr25519Keypair> {
  if (args["bittensor-wallet"])
    return (await readBittensorHotkey(args["bittensor-wallet"], args.hotkey ?? "default")).pair;
  return loadKey(args.key ?? "default");
}
