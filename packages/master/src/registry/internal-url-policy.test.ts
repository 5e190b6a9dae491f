import { describe, expect, it } from "vitest";
import { DEFAULT_INTERNAL_URL_POLICY, enforceInternalUrlPolicy } from "./internal-url-policy.js";

const refused = (text: string) =>
  expect.objectContaining({
    status: 400,
    code: "internal_url_refused",
    message: expect.stringContaining(text),
  });

describe("enforceInternalUrlPolicy", () => {
  it.each([
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.1.1:9000",
    "http://2852039166/", // 169.254.169.254 as one decimal number
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://[fe80::1]:9000",
    "http://[febf::1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::169.254.169.254]/",
    "http://[fd00:ec2::254]/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.google.internal./",
  ])("refuses the link-local or metadata address %s by default", (url) => {
    expect(() => enforceInternalUrlPolicy(url, DEFAULT_INTERNAL_URL_POLICY)).toThrow(
      refused("link-local"),
    );
    expect(() => enforceInternalUrlPolicy(url, { allowLinkLocal: true })).not.toThrow();
  });

  it.each([
    "http://u:PASSWORD@live.internal:9000",
    "http://:hunter2@live.internal:9000",
    "https://token@live.internal",
  ])("refuses userinfo, even when link-local is allowed: %s", (url) => {
    expect(() => enforceInternalUrlPolicy(url, { allowLinkLocal: true })).toThrow(
      refused("credentials"),
    );
  });

  it.each([
    "http://live.internal:9000",
    "http://127.0.0.1:9000",
    "http://10.0.0.5:8080",
    "http://172.17.0.2:8080",
    "http://[::1]:9000",
    "http://[fec0::1]/",
    "http://169.253.1.1/",
    "http://[::ffff:10.0.0.1]/",
  ])("accepts an ordinary internal address: %s", (url) => {
    expect(() => enforceInternalUrlPolicy(url, DEFAULT_INTERNAL_URL_POLICY)).not.toThrow();
  });
});
