import { loadMasterConfig } from "@platform/master";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CliError, runCommand } from "./_shared.js";

describe("runCommand", () => {
  let stderr = "";
  beforeEach(() => {
    stderr = "";
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    vi.stubEnv("DEBUG", "1");
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    process.exitCode = undefined;
  });

  it("prints a ConfigError from another package (the master's) as a message, no stack, exit 1", async () => {
    await runCommand(async () => {
      loadMasterConfig({}, { PLATFORM_PORT: "eighty" });
    });
    expect(stderr).toMatch(/^error: Invalid master configuration:\n {2}- ADMIN_TOKEN: /);
    expect(stderr).toContain("PLATFORM_PORT");
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(process.exitCode).toBe(1);
  });

  it("prints a CliError with its exit code", async () => {
    await runCommand(async () => {
      throw new CliError("nope", 3);
    });
    expect(stderr).toBe("error: nope\n");
    expect(process.exitCode).toBe(3);
  });

  it("recognises ConfigError by class, not by name: a lookalike is an unexpected error", async () => {
    await runCommand(async () => {
      throw Object.assign(new Error("pretend"), { name: "ConfigError" });
    });
    // Unexpected errors show their stack with DEBUG set.
    expect(stderr).toMatch(/^error: pretend\n.*\n\s+at /s);
    expect(process.exitCode).toBe(1);
  });
});
