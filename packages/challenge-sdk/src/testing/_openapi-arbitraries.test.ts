import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { refResolver, validValueOf } from "./_openapi-arbitraries.js";

const resolve = refResolver({});

describe("validValueOf: strings with a pattern", () => {
  it("generates matches longer than its default length cap (a sha256 hex), without spinning", () => {
    const schema = { type: "string", pattern: "^[0-9a-f]{64}$" };
    const values = fc.sample(validValueOf(schema, resolve) as fc.Arbitrary<string>, {
      numRuns: 20,
      seed: 7,
    });
    expect(values).toHaveLength(20);
    for (const value of values) expect(value).toMatch(/^[0-9a-f]{64}$/);
  });

  it("keeps the declared length bounds", () => {
    const schema = { type: "string", pattern: "^[a-z]+$", minLength: 3, maxLength: 5 };
    const values = fc.sample(validValueOf(schema, resolve) as fc.Arbitrary<string>, {
      numRuns: 30,
      seed: 7,
    });
    for (const value of values) {
      expect(value).toMatch(/^[a-z]{3,5}$/);
    }
  });
});
