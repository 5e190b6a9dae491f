import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CURSOR_MAX_LENGTH, CursorError, decodeCursor, encodeCursor } from "./signed-cursor.js";

const key = randomBytes(32);
const scope = "eval-status:submission:42";

function errorOf(action: () => unknown): CursorError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(CursorError);
    expect((error as CursorError).code).toBe("invalid_cursor");
    return error as CursorError;
  }
  throw new Error("expected a CursorError");
}

describe("signed cursors", () => {
  it("round-trips the after value for the same scope", () => {
    const after = { created_at: "2026-11-23T13:00:00.000Z", id: 987 };
    const cursor = encodeCursor(key, scope, after);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(decodeCursor(key, scope, cursor)).toEqual(after);
    expect(decodeCursor(key, scope, encodeCursor(key, scope, null))).toBeNull();
    expect(decodeCursor(key, scope, encodeCursor(key, scope, 7))).toBe(7);
  });

  it("is deterministic, so the same page always hands out the same cursor", () => {
    expect(encodeCursor(key, scope, { b: 1, a: 2 })).toBe(encodeCursor(key, scope, { a: 2, b: 1 }));
  });

  it("refuses a cursor from another list (another submission, another route)", () => {
    const cursor = encodeCursor(key, scope, { id: 5 });
    errorOf(() => decodeCursor(key, "eval-status:submission:43", cursor));
    errorOf(() => decodeCursor(key, "review-history:submission:42", cursor));
  });

  it("refuses an edited payload, even one re-encoded cleanly", () => {
    const cursor = encodeCursor(key, scope, { id: 5 });
    const [, mac] = cursor.split(".");
    const edited = Buffer.from(JSON.stringify({ after: { id: 1 }, scope, v: 1 })).toString(
      "base64url",
    );
    errorOf(() => decodeCursor(key, scope, `${edited}.${mac}`));
  });

  it("refuses a cursor signed with another key", () => {
    errorOf(() => decodeCursor(key, scope, encodeCursor(randomBytes(32), scope, { id: 5 })));
  });

  it("refuses a correctly signed payload of another version or shape", () => {
    const sign = (body: string) => {
      const payload = Buffer.from(body).toString("base64url");
      const mac = createHmac("sha256", key)
        .update(`agent-eval/cursor/v1\0${payload}`)
        .digest("base64url");
      return `${payload}.${mac}`;
    };
    // The signing scheme is what the module does: a v:1 body with it is accepted...
    expect(decodeCursor(key, scope, sign(JSON.stringify({ v: 1, scope, after: 3 })))).toBe(3);
    // ...and every other shape is refused even with a valid MAC.
    errorOf(() => decodeCursor(key, scope, sign(JSON.stringify({ v: 2, scope, after: 3 }))));
    errorOf(() => decodeCursor(key, scope, sign(JSON.stringify({ v: 1, scope }))));
    errorOf(() => decodeCursor(key, scope, sign(JSON.stringify([1, scope, 3]))));
    errorOf(() => decodeCursor(key, scope, sign("not json")));
  });

  it.each([
    ["empty", ""],
    ["no MAC", "eyJ2IjoxfQ"],
    ["two dots", `a.b.${"A".repeat(43)}`],
    ["a short MAC", `abc.${"A".repeat(42)}`],
    ["padding", `abc.${"A".repeat(43)}=`],
    ["spare MAC bits set", `abc.${"A".repeat(42)}B`],
    ["non-base64url characters", `a+b/.${"A".repeat(43)}`],
  ])("refuses a malformed cursor: %s", (_label, cursor) => {
    errorOf(() => decodeCursor(key, scope, cursor));
  });

  it("enforces the maximum length before any work (512 for eval status)", () => {
    // A genuine cursor made longer than the limit by a big after value is still refused.
    const after = "x".repeat(300);
    const cursor = encodeCursor(key, scope, after, 1024);
    expect(cursor.length).toBeGreaterThan(CURSOR_MAX_LENGTH);
    expect(decodeCursor(key, scope, cursor, 1024)).toBe(after);
    expect(errorOf(() => decodeCursor(key, scope, cursor)).message).toContain("longer than 512");
    // A hostile megabyte is refused without being hashed or parsed: refusing it costs what
    // refusing a cursor just over the limit costs (work on it would grow with its 1 MiB, about
    // 1,800 times the short one). A growth, measured here in the same process, not a time.
    const huge = `${"A".repeat(1 << 20)}.${"A".repeat(43)}`;
    const short = `${"A".repeat(CURSOR_MAX_LENGTH - 43)}.${"A".repeat(43)}`;
    const cpu = (cursor: string) =>
      Math.min(
        ...[0, 1, 2].map(() => {
          const start = process.cpuUsage();
          for (let round = 0; round < 1000; round += 1)
            errorOf(() => decodeCursor(key, scope, cursor));
          const used = process.cpuUsage(start);
          return used.user + used.system;
        }),
      );
    expect(short.length).toBeGreaterThan(CURSOR_MAX_LENGTH);
    expect(cpu(huge) / Math.max(cpu(short), 1)).toBeLessThan(10);
  });

  it("refuses to issue a cursor it would refuse to read back", () => {
    expect(() => encodeCursor(key, scope, "x".repeat(600))).toThrow(RangeError);
  });

  it("refuses a short key", () => {
    expect(() => encodeCursor(Buffer.alloc(8), scope, 1)).toThrow(RangeError);
  });
});
