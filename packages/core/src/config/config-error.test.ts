import { describe, expect, it, vi } from "vitest";
import { ConfigError } from "./config-error.js";

const issues = [
  { variable: "PORT", message: "must be an integer" },
  { variable: "LOG_LEVEL", message: "must be one of debug, info" },
];

describe("ConfigError", () => {
  it("lists every issue under one heading", () => {
    const error = new ConfigError(issues, "master configuration");
    expect(error.message).toBe(
      "Invalid master configuration:\n  - PORT: must be an integer\n  - LOG_LEVEL: must be one of debug, info",
    );
    expect(error.name).toBe("ConfigError");
    expect(error.issues).toEqual(issues);
    expect(error).toBeInstanceOf(Error);
  });

  it("is recognised by instanceof from another copy of core, and only when it is one", async () => {
    // A second module instance stands for a second installed copy of @platform/core.
    vi.resetModules();
    const other = (await import("./config-error.js")) as {
      ConfigError: typeof ConfigError;
    };
    expect(other.ConfigError).not.toBe(ConfigError);
    expect(new other.ConfigError(issues)).toBeInstanceOf(ConfigError);
    expect(new ConfigError(issues)).toBeInstanceOf(other.ConfigError);
    const lookalike = Object.assign(new Error("x"), { name: "ConfigError", issues });
    expect(lookalike).not.toBeInstanceOf(ConfigError);
    for (const value of [null, undefined, "ConfigError", 1, {}]) {
      expect(value instanceof ConfigError).toBe(false);
    }
  });

  it("keeps the ordinary check for a subclass", () => {
    class MasterConfigError extends ConfigError {}
    expect(new MasterConfigError(issues)).toBeInstanceOf(MasterConfigError);
    expect(new MasterConfigError(issues)).toBeInstanceOf(ConfigError);
    expect(new ConfigError(issues)).not.toBeInstanceOf(MasterConfigError);
  });
});
