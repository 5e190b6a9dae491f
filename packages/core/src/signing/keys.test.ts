import { mnemonicToMiniSecret, sr25519PairFromSeed } from "@polkadot/util-crypto";
import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { beforeAll, describe, expect, it } from "vitest";
import { initCrypto } from "./init-crypto.js";
import { generateMnemonic, keypairFromMnemonic, keypairFromSeed } from "./keys.js";
import { encodeSs58 } from "./ss58.js";

const DEV_PHRASE = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
const DEV_ADDRESS = "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV";
const DEV_SEED = "0xfac7959dbfe72f052e5a0c3c8d6530f202b02fd8f9f5ca3580ec8deb7797479e";

beforeAll(initCrypto);

describe("keys", () => {
  it("derives the substrate dev address from the dev phrase", () => {
    const pair = keypairFromMnemonic(DEV_PHRASE);
    expect(pair.address).toBe(DEV_ADDRESS);
    expect(pair.publicKey).toHaveLength(32);
    expect(pair.secretKey).toHaveLength(64);
  });

  it("matches the pure-JS polkadot-js derivation byte for byte", () => {
    const pair = keypairFromMnemonic(DEV_PHRASE);
    const reference = sr25519PairFromSeed(mnemonicToMiniSecret(DEV_PHRASE));
    expect(pair.publicKey).toEqual(reference.publicKey);
    expect(pair.secretKey).toEqual(reference.secretKey);
  });

  it("derives polkadot-js's mini secret for random 12- and 24-word phrases", () => {
    for (const words of [12, 24, 12, 24] as const) {
      const phrase = generateMnemonic(words);
      const reference = sr25519PairFromSeed(mnemonicToMiniSecret(phrase));
      expect(keypairFromMnemonic(phrase).publicKey, phrase).toEqual(reference.publicKey);
    }
  });

  it("derives the same pair from the mini secret seed", () => {
    expect(keypairFromSeed(DEV_SEED).address).toBe(DEV_ADDRESS);
    expect(keypairFromSeed(DEV_SEED.slice(2)).address).toBe(DEV_ADDRESS);
    expect(keypairFromSeed(new Uint8Array(Buffer.from(DEV_SEED.slice(2), "hex"))).address).toBe(
      DEV_ADDRESS,
    );
  });

  it("tolerates spacing and case but not a wrong word or checksum", () => {
    expect(
      keypairFromMnemonic(`  ${DEV_PHRASE.toUpperCase().replaceAll(" ", "  \n")} `).address,
    ).toBe(DEV_ADDRESS);
    expect(() => keypairFromMnemonic(DEV_PHRASE.replace("walk", "notaword"))).toThrow(/mnemonic/);
    expect(() => keypairFromMnemonic(DEV_PHRASE.replace("walk", "bottom"))).toThrow(/checksum/);
    expect(() => keypairFromMnemonic("")).toThrow(/mnemonic/);
  });

  it("honours another ss58 prefix", () => {
    const pair = keypairFromMnemonic(DEV_PHRASE, { ss58Prefix: 0 });
    expect(pair.address).toBe(encodeSs58(pair.publicKey, 0));
    expect(pair.address).not.toBe(DEV_ADDRESS);
  });

  it("refuses a seed that is not 32 bytes", () => {
    expect(() => keypairFromSeed("0x1234")).toThrow(/32 bytes/);
    expect(() => keypairFromSeed(new Uint8Array(31))).toThrow(/32 bytes/);
    expect(() => keypairFromSeed(`0x${"zz".repeat(32)}`)).toThrow(/32 bytes/);
  });

  it("generates valid 12- and 24-word English mnemonics that differ", () => {
    const twelve = generateMnemonic();
    const twentyFour = generateMnemonic(24);
    expect(twelve.split(" ")).toHaveLength(12);
    expect(twentyFour.split(" ")).toHaveLength(24);
    expect(validateMnemonic(twelve, wordlist)).toBe(true);
    expect(validateMnemonic(twentyFour, wordlist)).toBe(true);
    expect(generateMnemonic()).not.toBe(twelve);
    expect(keypairFromMnemonic(twelve).address).toMatch(/^5/);
    expect(() => generateMnemonic(15 as 12)).toThrow(RangeError);
  });
});
