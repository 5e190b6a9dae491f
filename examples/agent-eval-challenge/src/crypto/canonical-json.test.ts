import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CanonicalJsonError,
  canonicalDigest,
  canonicalJson,
  MAX_CANONICAL_DEPTH,
  parseCanonical,
} from "./canonical-json.js";

/** The double with this IEEE 754 bit pattern (the form RFC 8785 Appendix B lists). */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    if (error instanceof CanonicalJsonError) return error.code;
    throw error;
  }
  return undefined;
}

describe("canonicalJson: RFC 8785 examples", () => {
  it("serialises the §3.2.4 example, byte for byte", () => {
    // The RFC's input text, parsed as any JSON parser would.
    const input = JSON.parse(
      '{\n  "numbers": [333333333.33333329, 1E30, 4.50,\n              2e-3, 0.000000000000000000000000001],\n  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
    );
    const output = canonicalJson(input);
    expect(output).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    // The RFC's UTF-8 hex dump of the same output (€ as raw e2 82 ac, U+000F as \u000f).
    const hex = `
      7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72 75 65 2c 66 61 6c 73 65 5d 2c
      22 6e 75 6d 62 65 72 73 22 3a 5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
      65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37 5d 2c 22 73 74 72 69 6e 67 22
      3a 22 e2 82 ac 24 5c 75 30 30 30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`;
    expect(Buffer.from(output, "utf8").toString("hex")).toBe(hex.replace(/\s+/g, ""));
  });

  it("sorts the §3.2.3 non-ASCII member names by UTF-16 code units", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    // Read the order from the text: JSON.parse would move the integer-like "1" first.
    const order = [...canonicalJson(input).matchAll(/:"([^"]+)"/g)].map((match) => match[1]);
    expect(order).toEqual([
      "Carriage Return",
      "One",
      "Control",
      "Latin Small Letter O With Diaeresis",
      "Euro Sign",
      "Emoji: Grinning Face", // U+1F600 is D83D DE00 in UTF-16: before U+FB33, after U+20AC
      "Hebrew Letter Dalet With Dagesh",
    ]);
  });

  it.each([
    ["0000000000000000", "0"],
    ["8000000000000000", "0"],
    ["0000000000000001", "5e-324"],
    ["8000000000000001", "-5e-324"],
    ["7fefffffffffffff", "1.7976931348623157e+308"],
    ["ffefffffffffffff", "-1.7976931348623157e+308"],
    ["4340000000000000", "9007199254740992"],
    ["c340000000000000", "-9007199254740992"],
    ["4430000000000000", "295147905179352830000"],
    ["44b52d02c7e14af5", "9.999999999999997e+22"],
    ["44b52d02c7e14af6", "1e+23"],
    ["44b52d02c7e14af7", "1.0000000000000001e+23"],
    ["444b1ae4d6e2ef4e", "999999999999999700000"],
    ["444b1ae4d6e2ef4f", "999999999999999900000"],
    ["444b1ae4d6e2ef50", "1e+21"],
    ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
    ["3eb0c6f7a0b5ed8d", "0.000001"],
    ["41b3de4355555553", "333333333.3333332"],
    ["41b3de4355555554", "333333333.33333325"],
    ["41b3de4355555555", "333333333.3333333"],
    ["41b3de4355555556", "333333333.3333334"],
    ["41b3de4355555557", "333333333.33333343"],
    ["becbf647612f3696", "-0.0000033333333333333333"],
    ["43143ff3c1cb0959", "1424953923781206.2"],
  ])("serialises the Appendix B number %s as %s", (bits, expected) => {
    expect(canonicalJson(fromBits(bits))).toBe(expected);
    expect(canonicalJson([fromBits(bits)])).toBe(`[${expected}]`);
  });

  it.each([
    ["7fffffffffffffff", "NaN"],
    ["7ff0000000000000", "Infinity"],
    ["fff0000000000000", "-Infinity"],
  ])("refuses the Appendix B number %s (%s)", (bits) => {
    expect(codeOf(() => canonicalJson({ score: fromBits(bits) }))).toBe("non_finite_number");
  });
});

describe("canonicalJson: strings", () => {
  it("escapes only what the RFC requires, control characters in lower-case hex", () => {
    const allControls = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)).join(
      "",
    );
    expect(canonicalJson(allControls)).toBe(
      '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
        '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"',
    );
    expect(canonicalJson('"\\/<>&\u007f\u2028\u2029é😀')).toBe(
      '"\\"\\\\/<>&\u007f\u2028\u2029é😀"',
    );
  });

  it("refuses lone surrogates in values and in member names, keeps valid pairs", () => {
    expect(codeOf(() => canonicalJson("a\ud800b"))).toBe("lone_surrogate");
    expect(codeOf(() => canonicalJson("\udc00"))).toBe("lone_surrogate");
    expect(codeOf(() => canonicalJson("😀\ud83d"))).toBe("lone_surrogate");
    expect(codeOf(() => canonicalJson({ "\udfff": 1 }))).toBe("lone_surrogate");
    expect(canonicalJson("\ud83d\ude00")).toBe('"😀"');
  });
});

describe("canonicalJson: structure and refusals", () => {
  it("writes no whitespace and keeps array order while sorting nested members", () => {
    expect(canonicalJson({ b: [3, 1, { z: 1, a: [] }], a: {}, "": null })).toBe(
      '{"":null,"a":{},"b":[3,1,{"a":[],"z":1}]}',
    );
  });

  it("orders by code units, not code points or locale", () => {
    // U+FF61 (one unit) sorts after U+1F600 (units D83D DE00) although its code point is lower.
    expect(canonicalJson({ "\uff61": 1, "😀": 2, B: 3, a: 4, Z: 5 })).toBe(
      '{"B":3,"Z":5,"a":4,"😀":2,"｡":1}',
    );
  });

  it("serialises -0 as 0 wherever it appears", () => {
    expect(canonicalJson({ x: -0, y: [-0] })).toBe('{"x":0,"y":[0]}');
  });

  it.each([
    ["undefined", undefined],
    ["a function", () => 1],
    ["a bigint", 10n],
    ["a symbol", Symbol("s")],
  ])("refuses %s at the top, in an array and as a member", (_label, bad) => {
    expect(codeOf(() => canonicalJson(bad))).toBe("unsupported_value");
    expect(codeOf(() => canonicalJson([1, bad]))).toBe("unsupported_value");
    expect(codeOf(() => canonicalJson({ a: 1, b: bad }))).toBe("unsupported_value");
  });

  it("refuses holes, non-plain objects and symbol-keyed members instead of guessing", () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point of the test
    expect(codeOf(() => canonicalJson([1, , 3]))).toBe("unsupported_value");
    expect(codeOf(() => canonicalJson(new Date(0)))).toBe("unsupported_value");
    expect(codeOf(() => canonicalJson(new Map([["a", 1]])))).toBe("unsupported_value");
    expect(codeOf(() => canonicalJson({ n: new Number(1) }))).toBe("unsupported_value");
    expect(codeOf(() => canonicalJson({ [Symbol("s")]: 1 }))).toBe("unsupported_value");
    expect(canonicalJson(Object.assign(Object.create(null), { b: 1, a: 2 }))).toBe('{"a":2,"b":1}');
  });

  it("refuses cycles but accepts a shared (acyclic) reference", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { inner: cyclic };
    expect(codeOf(() => canonicalJson(cyclic))).toBe("cyclic_value");
    const loop: unknown[] = [];
    loop.push(loop);
    expect(codeOf(() => canonicalJson(loop))).toBe("cyclic_value");
    const shared = { k: 1 };
    expect(canonicalJson({ a: shared, b: [shared, shared] })).toBe(
      '{"a":{"k":1},"b":[{"k":1},{"k":1}]}',
    );
  });

  it("refuses very deep nesting with a typed error, not a stack overflow", () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level += 1) deep = [deep];
    expect(codeOf(() => canonicalJson(deep))).toBe("too_deep");
    let limit: unknown = 1;
    for (let level = 0; level < MAX_CANONICAL_DEPTH; level += 1) limit = [limit];
    expect(canonicalJson(limit)).toBe(
      `${"[".repeat(MAX_CANONICAL_DEPTH)}1${"]".repeat(MAX_CANONICAL_DEPTH)}`,
    );
  });

  it("never puts a string value in an error message", () => {
    try {
      canonicalJson({ token: "sk-secret-value", bad: Number.NaN });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain("$.bad");
      expect((error as Error).message).not.toContain("sk-secret-value");
    }
  });

  it("keeps a hostile member name out of the error message", () => {
    const name = "n".repeat(1 << 20);
    const message = (() => {
      try {
        canonicalJson({ [name]: Number.POSITIVE_INFINITY });
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    })();
    expect(message).toContain("not a finite number");
    expect(message.length).toBeLessThan(300);
  });
});

describe("canonicalDigest", () => {
  it("is the sha256 hex of the canonical UTF-8 bytes, independent of member order", () => {
    const expected = createHash("sha256")
      .update(Buffer.from('{"a":"€","b":1}', "utf8"))
      .digest("hex");
    expect(canonicalDigest({ b: 1, a: "€" })).toBe(expected);
    expect(canonicalDigest({ a: "€", b: 1 })).toBe(expected);
    expect(canonicalDigest({ a: "€", b: 2 })).not.toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("parseCanonical", () => {
  const bytes = (text: string) => Buffer.from(text, "utf8");

  it("returns the value of a canonical body", () => {
    expect(parseCanonical(bytes('{"a":[1,2.5,"é"],"b":{"c":null}}'))).toEqual({
      a: [1, 2.5, "é"],
      b: { c: null },
    });
    expect(parseCanonical(bytes("1e+30"))).toBe(1e30);
  });

  it.each([
    ["whitespace", '{"a": 1}'],
    ["a trailing newline", '{"a":1}\n'],
    ["unsorted members", '{"b":1,"a":2}'],
    ["a duplicate member (last wins in JSON.parse)", '{"a":1,"a":1}'],
    ["a non-shortest number", '{"a":1.0}'],
    ["an exponent spelling", '{"a":1E30}'],
    ["negative zero", '{"a":-0}'],
    ["an unneeded escape", '{"a":"\\u0041"}'],
    ["an escaped slash", '{"a":"\\/"}'],
    ["upper-case hex", '{"a":"\\u001F"}'],
    ["an escaped non-ASCII character", '{"a":"\\u00e9"}'],
    ["an escaped lone surrogate", '{"a":"\\ud800"}'],
    ["a BOM", '\ufeff{"a":1}'],
    ["not JSON", '{"a":1'],
    ["an empty body", ""],
    ["a number too large for a double", "1e400"],
  ])("refuses %s with not_canonical_json", (_label, text) => {
    expect(codeOf(() => parseCanonical(bytes(text)))).toBe("not_canonical_json");
  });

  it("refuses invalid UTF-8 (overlong, encoded surrogate, truncated)", () => {
    const quoted = (inner: number[]) => Buffer.from([0x22, ...inner, 0x22]);
    expect(codeOf(() => parseCanonical(quoted([0xc0, 0xaf])))).toBe("not_canonical_json");
    expect(codeOf(() => parseCanonical(quoted([0xed, 0xa0, 0x80])))).toBe("not_canonical_json");
    expect(codeOf(() => parseCanonical(quoted([0xe2, 0x82])))).toBe("not_canonical_json");
    expect(parseCanonical(quoted([0xe2, 0x82, 0xac]))).toBe("€");
  });

  it("refuses a deeply nested hostile body with a typed error", () => {
    const body = `${"[".repeat(50_000)}${"]".repeat(50_000)}`;
    expect(codeOf(() => parseCanonical(bytes(body)))).toBe("not_canonical_json");
  });

  it("round-trips what canonicalJson produces", () => {
    const value = { z: [0.1, -5e-324, 1e21], a: "\u0000\u2028😀", m: { "\u00f6": true, o: false } };
    expect(parseCanonical(bytes(canonicalJson(value)))).toEqual(value);
  });
});
