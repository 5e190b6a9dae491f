import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAdminToken } from "./admin-token.js";

describe("loadAdminToken", () => {
  const dir = mkdtempSync(join(tmpdir(), "admin-token-"));

  it("prefers ADMIN_TOKEN", () => {
    expect(loadAdminToken({ ADMIN_TOKEN: "a-long-enough-admin-token" })).toEqual({
      token: "a-long-enough-admin-token",
      source: "ADMIN_TOKEN",
    });
  });

  it("reads and trims the file named by ADMIN_TOKEN_FILE", () => {
    const file = join(dir, "token");
    writeFileSync(file, "from-a-secret-file-0123\n");
    expect(loadAdminToken({ ADMIN_TOKEN_FILE: file })).toEqual({
      token: "from-a-secret-file-0123",
      source: "ADMIN_TOKEN_FILE",
    });
  });

  it("returns null when nothing is configured", () => {
    expect(loadAdminToken({})).toBeNull();
  });

  it("refuses a missing file, and a short token, without echoing the value", () => {
    expect(() => loadAdminToken({ ADMIN_TOKEN_FILE: join(dir, "absent") })).toThrow(
      /cannot be read \(ENOENT\)/,
    );
    let message = "";
    try {
      loadAdminToken({ ADMIN_TOKEN: "tiny-secret" });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/shorter than 16/);
    expect(message).not.toContain("tiny-secret");
  });
});
