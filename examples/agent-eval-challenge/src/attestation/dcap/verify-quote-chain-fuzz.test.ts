// Every malformed input is a refusal with a code, never another exception: a stray TypeError in
// the chain would park a forged quote as "unavailable" instead of rejecting it. Deterministic
// (a fixed-seed generator), so a failure reproduces.

import { describe, expect, it } from "vitest";
import { TdxQuoteError } from "../quote-error.js";
import { parseTdxQuote } from "../tdx-quote.js";
import { FIXTURE_TIME, realCollateral, realQuote } from "./_test-fixtures.js";
import type { DcapCollateral } from "./collateral.js";
import { DcapChainError } from "./dcap-error.js";
import { verifyQuoteChain } from "./verify-quote-chain.js";

function generator(seed: number) {
  let state = seed >>> 0;
  return (below: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % below;
  };
}

function outcome(quote: Buffer, collateral: DcapCollateral): string {
  try {
    verifyQuoteChain(parseTdxQuote(quote), collateral, { now: FIXTURE_TIME });
    return "ok";
  } catch (error) {
    if (error instanceof DcapChainError || error instanceof TdxQuoteError) return error.code;
    throw error;
  }
}

describe("verifyQuoteChain on mutated input", () => {
  const random = generator(34);
  const CERT_DATA = 636 + 134;

  it("refuses mutated certification data with a code, whatever the byte", () => {
    const codes = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const quote = realQuote();
      const at = CERT_DATA + random(quote.length - CERT_DATA - 70);
      quote[at] = random(256);
      codes.add(outcome(quote, realCollateral()));
    }
    expect(codes.size).toBeGreaterThan(3);
  });

  it("refuses mutated collateral with a code, whatever the byte", () => {
    const fields = ["pckCrl", "rootCaCrl"] as const;
    const texts = [
      "tcbInfoBody",
      "qeIdentityBody",
      "tcbInfoIssuerChain",
      "qeIdentityIssuerChain",
      "pckCrlIssuerChain",
    ] as const;
    for (let i = 0; i < 300; i++) {
      const collateral = { ...realCollateral() } as {
        -readonly [K in keyof DcapCollateral]: DcapCollateral[K];
      };
      if (i % 2 === 0) {
        const field = fields[random(fields.length)]!;
        const bytes = Buffer.from(collateral[field]);
        bytes[random(bytes.length)] = random(256);
        collateral[field] = bytes;
      } else {
        const field = texts[random(texts.length)]!;
        const text = collateral[field];
        const at = random(text.length);
        collateral[field] =
          text.slice(0, at) + String.fromCharCode(32 + random(95)) + text.slice(at + 1);
      }
      expect(typeof outcome(realQuote(), collateral)).toBe("string");
    }
  });
});
