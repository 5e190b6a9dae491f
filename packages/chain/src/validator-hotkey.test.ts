import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HotkeyFileError, readValidatorHotkey } from "./validator-hotkey.js";

// The substrate development phrase: //Alice's root. Public test material, never a real key.
const PHRASE = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
const ADDRESS = "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV";
const SEED = `0x${"ab".repeat(32)}`;

function file(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "hotkey-")), "hotkey");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("readValidatorHotkey", () => {
  it("reads a Bittensor wallet hotkey file and a saved platform key to the same pair", async () => {
    const wallet = await readValidatorHotkey(file({ secretPhrase: PHRASE, ss58Address: ADDRESS }));
    const saved = await readValidatorHotkey(
      file({ name: "v", mnemonic: PHRASE, ss58Address: ADDRESS }),
    );
    expect(wallet.pair.address).toBe(ADDRESS);
    expect(saved.pair.address).toBe(ADDRESS);
    expect(wallet.secret).toEqual({ mnemonic: PHRASE });
    const bySeed = await readValidatorHotkey(file({ secretSeed: SEED }));
    const bySavedSeed = await readValidatorHotkey(file({ seed: SEED }));
    expect(bySeed.pair.address).toBe(bySavedSeed.pair.address);
    expect(bySeed.secret).toEqual({ seed: SEED });
  });

  it("refuses what cannot sign, a stated address that is not the secret's, and never echoes a secret", async () => {
    const cases: [unknown, RegExp][] = [
      [{ ss58Address: ADDRESS }, /no secretPhrase, secretSeed, mnemonic or seed/],
      [
        { secretPhrase: PHRASE, ss58Address: "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY" },
        /derives 5Dfh.* but the file says 5Grw/,
      ],
      [
        { secretPhrase: "not a mnemonic at all but secret words" },
        /not a valid mnemonic or 32-byte seed/,
      ],
      [{ secretSeed: "0x1234" }, /not a valid mnemonic or 32-byte seed/],
      ["$$encrypted$$", /not a plain JSON hotkey file/],
      ["[1]", /holds no secretPhrase/],
    ];
    for (const [content, message] of cases) {
      const error = await readValidatorHotkey(file(content)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HotkeyFileError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain("secret words");
      expect((error as Error).message).not.toContain(PHRASE);
    }
    await expect(readValidatorHotkey("/nonexistent/hotkey")).rejects.toThrow(
      /cannot read the hotkey file .* \(ENOENT\)/,
    );
  });
});
