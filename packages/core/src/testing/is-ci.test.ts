import { describe, expect, it } from "vitest";
import { isCi } from "./is-ci.js";
import { testBackends } from "./test-backends.js";

describe("isCi", () => {
  it.each(["true", "1", "yes", "TRUE", "github-actions"])("counts CI=%s as CI", (value) => {
    expect(isCi({ CI: value })).toBe(true);
  });

  it.each([undefined, "", " ", "false", "FALSE", "0"])("does not count CI=%s", (value) => {
    expect(isCi({ CI: value })).toBe(false);
  });

  it("makes a missing PostgreSQL an error under CI=1, not a silent pglite-only run", async () => {
    const url = "postgres://postgres@127.0.0.1:1/none";
    await expect(testBackends({ url, env: { CI: "1" } })).rejects.toThrow(/CI/);
  });
});
