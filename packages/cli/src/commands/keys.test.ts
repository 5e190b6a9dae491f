import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../test/run-cli.js";

const DEV_PHRASE = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
const DEV_ADDRESS = "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV";

describe("platform keys", () => {
  const home = mkdtempSync(join(tmpdir(), "cli-keys-"));
  const keys = (...args: string[]) => runCli(["keys", ...args], { env: { PLATFORM_HOME: home } });

  it("creates a key from a fresh mnemonic and stores it readable only by its owner", async () => {
    const result = await keys("new", "--name", "miner1", "--json");
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout);
    expect(created.ss58Address).toMatch(/^5[1-9A-HJ-NP-Za-km-z]{47}$/);
    expect(created.mnemonic.split(" ")).toHaveLength(12);
    expect(statSync(created.path).mode & 0o777).toBe(0o600);
    const shown = await keys("show", "--name", "miner1");
    expect(shown.stdout).toContain(created.ss58Address);
    expect(shown.stdout).not.toContain(
      created.mnemonic.split(" ")[0] === "" ? "x" : created.mnemonic,
    );
    const again = await keys("new", "--name", "miner1");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists already");
  });

  it("imports a mnemonic and derives the well-known dev address", async () => {
    const result = await keys("import", "--name", "dev", "--mnemonic", DEV_PHRASE);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(DEV_ADDRESS);
    const bad = await keys("import", "--name", "bad", "--mnemonic", "not a real mnemonic at all");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("not a valid mnemonic");
  });

  it("imports a Bittensor wallet hotkey file and checks its address", async () => {
    const wallets = join(home, "wallets");
    mkdirSync(join(wallets, "coldie", "hotkeys"), { recursive: true });
    writeFileSync(
      join(wallets, "coldie", "hotkeys", "hot1"),
      JSON.stringify({ secretPhrase: DEV_PHRASE, ss58Address: DEV_ADDRESS }),
    );
    const ok = await keys(
      "import",
      "--name",
      "bt",
      "--bittensor-wallet",
      "coldie",
      "--hotkey",
      "hot1",
      "--wallets-dir",
      wallets,
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(DEV_ADDRESS);
    writeFileSync(
      join(wallets, "coldie", "hotkeys", "liar"),
      JSON.stringify({
        secretPhrase: DEV_PHRASE,
        ss58Address: "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY",
      }),
    );
    const liar = await keys(
      "import",
      "--name",
      "liar",
      "--bittensor-wallet",
      "coldie",
      "--hotkey",
      "liar",
      "--wallets-dir",
      wallets,
    );
    expect(liar.code).toBe(1);
    expect(liar.stderr).toContain("but the file says");
    writeFileSync(join(wallets, "coldie", "hotkeys", "enc"), "$NACL encrypted bytes");
    const encrypted = await keys(
      "import",
      "--name",
      "enc",
      "--bittensor-wallet",
      "coldie",
      "--hotkey",
      "enc",
      "--wallets-dir",
      wallets,
    );
    expect(encrypted.stderr).toContain("encrypted hotkeys are not supported");
  });

  it("lists keys without secrets", async () => {
    const result = await keys("list", "--json");
    const listed = JSON.parse(result.stdout);
    expect(listed.map((key: { name: string }) => key.name)).toEqual(
      expect.arrayContaining(["miner1", "dev"]),
    );
    expect(result.stdout).not.toContain("mnemonic");
    const stored = JSON.parse(readFileSync(join(home, "keys", "dev.json"), "utf8"));
    expect(stored.mnemonic).toBe(DEV_PHRASE);
  });
});
