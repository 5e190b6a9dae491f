import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "./read-environment.js";

const schema = Type.Object({
  WORKERS: Type.Integer({ minimum: 1, default: 2 }),
  RATIO: Type.Number({ exclusiveMinimum: 0, default: 0.5 }),
  STRICT: Type.Boolean({ default: false }),
  MODE: Type.Union([Type.Literal("fast"), Type.Literal("safe")], { default: "safe" }),
  API_KEY: Type.String({ minLength: 20 }),
  URL: Type.Optional(Type.String({ pattern: "^https?://" })),
});

describe("readEnvironment", () => {
  it("converts strings, fills defaults and ignores what the schema does not declare", () => {
    const result = readEnvironment(schema, {
      WORKERS: "8",
      STRICT: "true",
      API_KEY: "k".repeat(20),
      UNRELATED: "x",
    });
    expect(result).toEqual({
      ok: true,
      value: { WORKERS: 8, RATIO: 0.5, STRICT: true, MODE: "safe", API_KEY: "k".repeat(20) },
    });
  });

  it("treats an empty variable as unset", () => {
    const result = readEnvironment(schema, { WORKERS: "", API_KEY: "k".repeat(20), URL: "" });
    expect(result.ok && result.value).toMatchObject({ WORKERS: 2 });
    expect(result.ok && "URL" in result.value).toBe(false);
  });

  it("reports every bad variable at once, one line each, never a value", () => {
    const result = readEnvironment(schema, {
      WORKERS: "0",
      RATIO: "lots",
      STRICT: "yes",
      MODE: "reckless",
      API_KEY: "sk-secret",
      URL: "ftp://host",
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((issue) => issue.variable).sort()).toEqual([
      "API_KEY",
      "MODE",
      "RATIO",
      "STRICT",
      "URL",
      "WORKERS",
    ]);
    expect(result.issues.find((issue) => issue.variable === "MODE")?.message).toBe(
      'must be one of "fast", "safe"',
    );
    const text = JSON.stringify(result.issues);
    for (const value of ["lots", "yes", "reckless", "sk-secret", "ftp://host"]) {
      expect(text).not.toContain(value);
    }
  });

  it("says `required` for a missing variable without a default", () => {
    const result = readEnvironment(schema, {});
    expect(result).toEqual({ ok: false, issues: [{ variable: "API_KEY", message: "required" }] });
  });
});
