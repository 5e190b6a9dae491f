import { describe, expect, it } from "vitest";
import {
  children,
  DerError,
  derTime,
  integerHex,
  oidString,
  parseDer,
  readNode,
  smallInteger,
} from "./der.js";

const hex = (h: string) => Buffer.from(h.replace(/\s/g, ""), "hex");

describe("the DER reader", () => {
  it("reads nested nodes with their exact encodings", () => {
    const seq = parseDer(hex("30 06 02 01 05 04 01 ff"));
    const [int, octets] = children(seq);
    expect(smallInteger(int!)).toBe(5);
    expect(octets!.raw).toEqual(hex("04 01 ff"));
  });

  it("reads long-form lengths, and refuses non-minimal, indefinite or overlong ones", () => {
    const long = Buffer.concat([hex("04 81 80"), Buffer.alloc(128, 1)]);
    expect(parseDer(long).value).toHaveLength(128);
    expect(() => parseDer(hex("04 81 01 00"))).toThrow(DerError); // 1 fits the short form
    expect(() => parseDer(hex("04 82 00 80"))).toThrow(DerError); // leading zero octet
    expect(() => parseDer(hex("30 80 00 00"))).toThrow(DerError); // indefinite
    expect(() => parseDer(hex("04 85 01 00 00 00 00"))).toThrow(DerError);
  });

  it("refuses values that run past their container and trailing bytes", () => {
    expect(() => parseDer(hex("04 05 01 02"))).toThrow(DerError);
    expect(() => parseDer(hex("04 01 01 00"))).toThrow(DerError);
    expect(() => children(parseDer(hex("30 03 04 05 01")))).toThrow(DerError);
    expect(() => readNode(hex("04"))).toThrow(DerError);
    expect(() => children(parseDer(hex("04 01 01")))).toThrow(DerError); // primitive
  });

  it("decodes object identifiers", () => {
    // 1.2.840.113741.1.13.1: Intel's SGX extension
    expect(oidString(parseDer(hex("06 09 2a 86 48 86 f8 4d 01 0d 01")))).toBe(
      "1.2.840.113741.1.13.1",
    );
    expect(() => oidString(parseDer(hex("06 02 2a 86")))).toThrow(DerError); // truncated arc
    expect(() => oidString(parseDer(hex("02 01 00")))).toThrow(DerError);
  });

  it("reads integers: small ones as numbers, serials as hex without leading zeros", () => {
    expect(integerHex(parseDer(hex("02 03 00 ab cd")))).toBe("ABCD");
    expect(integerHex(parseDer(hex("02 01 00")))).toBe("0");
    expect(() => smallInteger(parseDer(hex("02 01 80")))).toThrow(DerError); // negative
    expect(() => smallInteger(parseDer(hex("02 07 01 00 00 00 00 00 00")))).toThrow(DerError);
  });

  it("reads UTCTime (two-digit years per RFC 5280) and GeneralizedTime", () => {
    const utc = (text: string) =>
      Buffer.concat([hex(`17 ${text.length.toString(16).padStart(2, "0")}`), Buffer.from(text)]);
    expect(derTime(parseDer(utc("250620000000Z"))).toISOString()).toBe("2025-06-20T00:00:00.000Z");
    expect(derTime(parseDer(utc("500101000000Z"))).getUTCFullYear()).toBe(1950);
    const generalized = Buffer.concat([hex("18 0f"), Buffer.from("20491231235959Z")]);
    expect(derTime(parseDer(generalized)).toISOString()).toBe("2049-12-31T23:59:59.000Z");
    expect(() => derTime(parseDer(utc("2506200000Z")))).toThrow(DerError);
    expect(() => derTime(parseDer(utc("250620000000+0100")))).toThrow(DerError);
  });
});
