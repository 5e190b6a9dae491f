import { hexToU8a, u8aToHex } from "@polkadot/util";
import { sr25519PairFromSeed, sr25519Verify } from "@polkadot/util-crypto";
import { describe, expect, it } from "vitest";
import { devKeys } from "./_test-chain.js";
import { validatorKeypair } from "./validator-keypair.js";

describe("validatorKeypair", () => {
  it("loads the validator's key from a mnemonic, a seed, a URI or a secret key", async () => {
    const { alice } = await devKeys();
    expect((await validatorKeypair({ uri: "//Alice" })).address).toBe(alice.address);
    const seed = "0xe5be9a5092b81bca64be81d212e7f2f9eba183bb7a90954f7b76361f6edb5c0a"; // //Alice mini-secret
    expect((await validatorKeypair({ seed })).address).toBe(alice.address);
    const mnemonic = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
    const fromMnemonic = await validatorKeypair({ mnemonic });
    expect(fromMnemonic.address).toBe("5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV");
    await expect(
      validatorKeypair({ mnemonic }, { expectedAddress: alice.address }),
    ).rejects.toThrow(/does not match/);
    expect(await validatorKeypair(alice)).toBe(alice);
    // A wallet hotkey file's privateKey (64-byte sr25519 secret) and publicKey.
    const pair = sr25519PairFromSeed(hexToU8a(seed));
    const fromSecret = await validatorKeypair(
      { secretKey: u8aToHex(pair.secretKey), publicKey: u8aToHex(pair.publicKey) },
      { expectedAddress: alice.address },
    );
    expect(fromSecret.address).toBe(alice.address);
    const message = new TextEncoder().encode("weights");
    expect(sr25519Verify(message, fromSecret.sign(message), alice.publicKey)).toBe(true);
  });
});
