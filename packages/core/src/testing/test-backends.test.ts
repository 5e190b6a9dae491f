import { afterEach, describe, expect, it, vi } from "vitest";
import { testBackends } from "./test-backends.js";

// Nothing listens on port 1, so these probes fail at once.
const unreachable = (tag: string) => `postgres://postgres:pw@127.0.0.1:1/${tag}`;

describe("testBackends", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("throws under CI=true when the server does not answer, without leaking the password", async () => {
    const error = await testBackends({ url: unreachable("ci"), env: { CI: "true" } }).catch(
      (e) => e,
    );
    expect(error.message).toMatch(/CI=true but the PostgreSQL test server did not answer/);
    expect(error.message).toContain("127.0.0.1:1");
    expect(error.message).not.toContain(":pw@");
  });

  it("falls back to pglite outside CI, warning loudly once", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const url = unreachable("local");
    expect(await testBackends({ url, env: { CI: "false" } })).toEqual(["pglite"]);
    expect(await testBackends({ url, env: {} })).toEqual(["pglite"]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/PostgreSQL tests SKIPPED/);
  });
});
