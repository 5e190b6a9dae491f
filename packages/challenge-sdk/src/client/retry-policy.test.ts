import { describe, expect, it } from "vitest";
import { backoffDelayMs, isRetryableStatus, retryAfterMs } from "./retry-policy.js";

describe("the retry policy", () => {
  it("retries 408, 425, 429 and every 5xx; any other status is definitive", () => {
    for (const status of [408, 425, 429, 500, 502, 503, 504, 599]) {
      expect(isRetryableStatus(status), String(status)).toBe(true);
    }
    for (const status of [200, 204, 301, 400, 401, 403, 404, 409, 410, 413, 422, 600]) {
      expect(isRetryableStatus(status), String(status)).toBe(false);
    }
  });

  it("reads Retry-After as seconds or as an HTTP date, and nothing else", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    expect(retryAfterMs("30", now)).toBe(30_000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs("Wed, 21 Oct 2026 07:28:12 GMT", now)).toBe(12_000);
    expect(retryAfterMs("Wed, 21 Oct 2026 07:27:00 GMT", now)).toBe(0);
    for (const junk of [null, "", "-5", "1.5", "soon", "2026-10-21", "1e3"]) {
      expect(retryAfterMs(junk, now), String(junk)).toBeNull();
    }
  });

  it("backs off exponentially up to its cap, in the upper half of each step", () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1_000 };
    expect([1, 2, 3, 4, 5, 9].map((retry) => backoffDelayMs(retry, options, () => 0))).toEqual([
      50, 100, 200, 400, 500, 500,
    ]);
    expect([1, 2, 3, 4, 5].map((retry) => backoffDelayMs(retry, options, () => 1))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
    expect(backoffDelayMs(1)).toBeGreaterThanOrEqual(500);
    expect(backoffDelayMs(1)).toBeLessThanOrEqual(1_000);
  });
});
