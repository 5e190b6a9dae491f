import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultAdminUrl, loadAdminConnection } from "./_admin-config.js";

const TOKEN = "admin-config-token-0123456789";

function configFile(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "admin-config-")), "master.yaml");
  writeFileSync(path, yaml);
  return path;
}

describe("loadAdminConnection", () => {
  it("defaults the admin URL to the registry URL with the port plus one", () => {
    expect(defaultAdminUrl("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8081");
    expect(defaultAdminUrl("http://master.example/")).toBe("http://master.example:81");
    expect(defaultAdminUrl("https://master.example")).toBe("https://master.example:444");
    const path = configFile(
      `master:\n  registry_url: http://10.0.0.5:9000/\nsecurity:\n  admin_token: ${TOKEN}\n`,
    );
    expect(loadAdminConnection(path, {})).toEqual({
      registryUrl: "http://10.0.0.5:9000",
      adminUrl: "http://10.0.0.5:9001",
      adminToken: TOKEN,
    });
  });

  it("reads master.admin_url, and PLATFORM_ADMIN_URL over it", () => {
    const path = configFile(
      `master:\n  registry_url: http://10.0.0.5:9000\n  admin_url: http://127.0.0.1:7000/\nsecurity:\n  admin_token: ${TOKEN}\n`,
    );
    expect(loadAdminConnection(path, {}).adminUrl).toBe("http://127.0.0.1:7000");
    expect(
      loadAdminConnection(path, { PLATFORM_ADMIN_URL: "http://127.0.0.1:7100" }).adminUrl,
    ).toBe("http://127.0.0.1:7100");
  });

  it("refuses an admin URL that is not http(s)", () => {
    const path = configFile(
      `master:\n  registry_url: http://10.0.0.5:9000\n  admin_url: ftp://x\nsecurity:\n  admin_token: ${TOKEN}\n`,
    );
    expect(() => loadAdminConnection(path, {})).toThrow(/admin URL must start with http/);
  });
});
