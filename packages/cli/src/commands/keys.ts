import { generateMnemonic, initCrypto, keypairFromMnemonic } from "@platform/core";
import { defineCommand } from "citty";
import { listKeys, readBittensorHotkey, saveKey, showKey } from "./_keystore.js";
import { CliError, jsonFlag, print, runCommand } from "./_shared.js";

const nameFlag = {
  name: { type: "string", description: "Name of the key in the keystore", default: "default" },
} as const;

const newKey = defineCommand({
  meta: {
    name: "new",
    description:
      "Create a hotkey from a fresh bip39 mnemonic and save it (~/.platform/keys, mode 0600)",
  },
  args: {
    ...nameFlag,
    words: { type: "string", description: "Mnemonic length: 12 or 24 words", default: "12" },
    force: { type: "boolean", description: "Replace an existing key of that name", default: false },
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      if (args.words !== "12" && args.words !== "24")
        throw new CliError(`--words must be 12 or 24, got "${args.words}"`);
      await initCrypto();
      const mnemonic = generateMnemonic(Number(args.words) as 12 | 24);
      const pair = keypairFromMnemonic(mnemonic);
      const path = saveKey(args.name, pair, { mnemonic }, args.force);
      print(args.json, { name: args.name, ss58Address: pair.address, mnemonic, path }, () =>
        [
          `hotkey ${args.name}: ${pair.address}`,
          `saved to ${path}`,
          "",
          "Mnemonic (write it down and keep it offline; anyone with it controls this hotkey):",
          `  ${mnemonic}`,
        ].join("\n"),
      );
    }),
});

const importKey = defineCommand({
  meta: {
    name: "import",
    description: "Import a hotkey from a mnemonic or from a Bittensor wallet hotkey file",
  },
  args: {
    ...nameFlag,
    mnemonic: {
      type: "string",
      description: "The bip39 mnemonic (prefer --mnemonic-file: arguments end up in shell history)",
    },
    "mnemonic-file": {
      type: "string",
      description: "A file holding the mnemonic",
      valueHint: "file",
    },
    "bittensor-wallet": {
      type: "string",
      description: "Wallet name under ~/.bittensor/wallets",
      valueHint: "wallet",
    },
    hotkey: { type: "string", description: "Hotkey name in that wallet", default: "default" },
    "wallets-dir": {
      type: "string",
      description: "Bittensor wallets folder (default ~/.bittensor/wallets)",
      valueHint: "dir",
    },
    force: { type: "boolean", description: "Replace an existing key of that name", default: false },
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      await initCrypto();
      let saved: { address: string; path: string; from: string };
      if (args["bittensor-wallet"]) {
        const {
          pair,
          mnemonic,
          seed,
          path: source,
        } = await readBittensorHotkey(
          args["bittensor-wallet"],
          args.hotkey,
          args["wallets-dir"] || undefined,
        );
        const secret = mnemonic ? { mnemonic } : seed ? { seed } : {};
        saved = {
          address: pair.address,
          path: saveKey(args.name, pair, secret, args.force),
          from: source,
        };
      } else {
        const { readFileSync } = await import("node:fs");
        const mnemonic = (
          args["mnemonic-file"]
            ? readFileSync(args["mnemonic-file"], "utf8")
            : (args.mnemonic ?? "")
        )
          .trim()
          .replace(/\s+/g, " ");
        if (!mnemonic) throw new CliError("give --mnemonic, --mnemonic-file or --bittensor-wallet");
        let pair: ReturnType<typeof keypairFromMnemonic>;
        try {
          pair = keypairFromMnemonic(mnemonic);
        } catch (error) {
          throw new CliError(`not a valid mnemonic: ${(error as Error).message}`);
        }
        saved = {
          address: pair.address,
          path: saveKey(args.name, pair, { mnemonic }, args.force),
          from: "mnemonic",
        };
      }
      print(
        args.json,
        { name: args.name, ss58Address: saved.address, path: saved.path },
        () =>
          `hotkey ${args.name}: ${saved.address}\nimported from ${saved.from}, saved to ${saved.path}`,
      );
    }),
});

const show = defineCommand({
  meta: {
    name: "show",
    description: "Print a saved hotkey's address and public key (never the secret)",
  },
  args: { ...nameFlag, ...jsonFlag },
  run: ({ args }) =>
    runCommand(async () => {
      const key = showKey(args.name);
      print(
        args.json,
        key,
        () =>
          `hotkey ${key.name}: ${key.ss58Address}\npublic key ${key.publicKey}\nfile ${key.path}`,
      );
    }),
});

const list = defineCommand({
  meta: { name: "list", description: "List saved hotkeys" },
  args: { ...jsonFlag },
  run: ({ args }) =>
    runCommand(async () => {
      const keys = listKeys();
      print(args.json, keys, () =>
        keys.length
          ? keys.map((key) => `${key.name}\t${key.ss58Address}`).join("\n")
          : "no keys yet: platform keys new",
      );
    }),
});

/** `platform keys`: miner hotkeys. */
export default defineCommand({
  meta: { name: "keys", description: "Create, import and show miner hotkeys (sr25519, ss58)" },
  subCommands: { new: newKey, import: importKey, show, list },
});
