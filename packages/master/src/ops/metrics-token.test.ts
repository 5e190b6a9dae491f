import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashToken } from "@platform/core";
import { describe, expect, it } from "vitest";
import { ConfigError, loadMasterConfig } from "../config.js";
import { loadMetricsTokenHash } from "./metrics-token.js";

const ADMIN = { ADMIN_TOKEN: "admin-token-0123456789abcdef" };
const TOKEN = "scrape-token-0123456789abcdef";

describe("the scrape token (PLATFORM_METRICS_TOKEN)", () => {
  it("is kept as its sha256 only, read from the variable or a file", () => {
    expect(loadMetricsTokenHash({})).toBeNull();
    expect(loadMetricsTokenHash({ PLATFORM_METRICS_TOKEN: ` ${TOKEN}\n` })).toBe(hashToken(TOKEN));
    const file = join(mkdtempSync(join(tmpdir(), "metrics-token-")), "token");
    writeFileSync(file, `${TOKEN}\n`);
    expect(loadMetricsTokenHash({ PLATFORM_METRICS_TOKEN_FILE: file })).toBe(hashToken(TOKEN));
    const config = loadMasterConfig({}, { ...ADMIN, PLATFORM_METRICS_TOKEN: TOKEN });
    expect(config.metricsTokenHash).toBe(hashToken(TOKEN));
    expect(JSON.stringify(config)).not.toContain(TOKEN);
    expect(loadMasterConfig({}, ADMIN).metricsTokenHash).toBeUndefined();
  });

  it("refuses a short token or an unreadable file, never showing the value", () => {
    const short = "tiny-token";
    let error: unknown;
    try {
      loadMasterConfig({}, { ...ADMIN, PLATFORM_METRICS_TOKEN: short });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toContain("PLATFORM_METRICS_TOKEN");
    expect(String((error as Error).message)).not.toContain(short);
    expect(() =>
      loadMasterConfig({}, { ...ADMIN, PLATFORM_METRICS_TOKEN_FILE: "/nonexistent/token" }),
    ).toThrow(/PLATFORM_METRICS_TOKEN_FILE/);
  });
});
