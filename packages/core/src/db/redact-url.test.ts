import { describe, expect, it } from "vitest";
import { redactDatabaseUrl, redactSecrets } from "./redact-url.js";

describe("redactDatabaseUrl", () => {
  it.each([
    ["postgres://app:s3cret@db:5432/app", "postgres://app:***@db:5432/app"],
    [
      "postgresql://app:p%40ss/word@db/app?sslmode=require",
      "postgresql://app:***@db/app?sslmode=require",
    ],
    [
      "postgres://db:5432/app?user=app&password=s3cret&x=1",
      "postgres://db:5432/app?user=app&password=***&x=1",
    ],
    ["postgres://app@db/app", "postgres://app@db/app"],
    ["postgres://db/app", "postgres://db/app"],
  ])("%s", (url, expected) => {
    expect(redactDatabaseUrl(url)).toBe(expected);
  });
});

describe("redactSecrets", () => {
  it("removes the password, raw and percent-decoded, from free text", () => {
    const url = "postgres://app:p%40ss@db/app";
    const text = `failed for ${url}: auth p@ss rejected (p%40ss)`;
    expect(redactSecrets(text, url)).toBe(
      "failed for postgres://app:***@db/app: auth *** rejected (***)",
    );
  });
});
