import { describe, expect, it } from "vitest";
import { masterCredentialCheck } from "./master-credential.js";

describe("masterCredentialCheck", () => {
  it("recognises the admin token bare or as a bearer, and nothing else", () => {
    const check = masterCredentialCheck("admin-secret-token");
    expect(check("Bearer admin-secret-token")).toBe(true);
    expect(check("bearer   admin-secret-token ")).toBe(true);
    expect(check("admin-secret-token")).toBe(true);
    expect(check("Bearer admin-secret-token-2")).toBe(false);
    expect(check("Bearer admin-secret")).toBe(false);
    expect(check("Basic admin-secret-token")).toBe(false);
    expect(check("Bearer other")).toBe(false);
  });

  it("treats nothing as a master credential when no admin token is configured", () => {
    expect(masterCredentialCheck("")("Bearer ")).toBe(false);
    expect(masterCredentialCheck("")("")).toBe(false);
  });
});
