import { describe, expect, it } from "vitest";
import { createLogger, redact, redactText } from "./logger.js";

describe("logger", () => {
  it("redacts secret-named fields at any depth", () => {
    const out = redact({
      user: "a",
      admin_token: "t0p",
      nested: { Authorization: "Bearer x", list: [{ password: "p" }] },
    });
    expect(out).toEqual({
      user: "a",
      admin_token: "[redacted]",
      nested: { Authorization: "[redacted]", list: [{ password: "[redacted]" }] },
    });
  });

  it("redacts bearer values and URL passwords inside free text", () => {
    expect(redactText("sent Bearer abc.def to postgres://app:s3cret@db:5432/x")).toBe(
      "sent Bearer [redacted] to postgres://app:[redacted]@db:5432/x",
    );
  });

  it("writes one JSON line per record, honouring the level", () => {
    const lines: string[] = [];
    const log = createLogger({ name: "svc", level: "info", write: (line) => lines.push(line) });
    log.debug("hidden");
    log.child({ request_id: "r1" }).warn("careful", { challenge_token: "secret-value" });
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({
      level: "warn",
      msg: "careful",
      name: "svc",
      request_id: "r1",
      challenge_token: "[redacted]",
    });
    expect(lines[0]).not.toContain("secret-value");
  });
});
