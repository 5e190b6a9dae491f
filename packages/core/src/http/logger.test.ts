import { describe, expect, it } from "vitest";
import { generateMnemonic } from "../signing/keys.js";
import { createLogger, redact, redactText, registerLogSecret } from "./logger.js";

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

  it("cuts the platform's token shapes and mnemonics out of free text, not ordinary words", () => {
    const token = `ct_${"A1b2-C3d4_".repeat(5)}`;
    expect(redactText(`the challenge refused ${token} twice`)).toBe(
      "the challenge refused [redacted] twice",
    );
    const mnemonic = generateMnemonic();
    expect(redactText(`restore with ${mnemonic} please`)).not.toContain(mnemonic.split(" ")[3]);
    const prose =
      "the master could not reach the challenge because the connection was refused by the peer";
    expect(redactText(prose)).toBe(prose);
  });

  it("never writes a registered secret, whatever field or message carries it", () => {
    const secret = 'operator-chosen "admin" token';
    registerLogSecret(secret);
    registerLogSecret("short"); // too short to register: ordinary words stay
    const lines: string[] = [];
    const log = createLogger({ name: "svc", write: (line) => lines.push(line) });
    log.info(`failed with ${secret}`, { detail: { note: secret }, word: "short" });
    expect(lines[0]).not.toContain("operator-chosen");
    expect(lines[0]).toContain('"word":"short"');
  });
});
