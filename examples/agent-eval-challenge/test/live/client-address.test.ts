// The client key of the live feeds' shares: X-Forwarded-For counts only when a trusted proxy
// sends it, walked right to left through trusted hops; an IPv6 client is its /64; a bad
// TRUSTED_PROXIES entry is named. And the shares themselves: refused in order, freed once.
import { describe, expect, it } from "vitest";
import {
  clientKey,
  DEFAULT_TRUSTED_PROXIES,
  trustedProxies,
} from "../../src/live/client-address.js";
import { FeedSlots } from "../../src/live/feed-slots.js";
import { resolveSettings } from "../../src/settings.js";

const forwarded = (value?: string) =>
  new Headers(value === undefined ? {} : { "x-forwarded-for": value });
const defaults = trustedProxies(DEFAULT_TRUSTED_PROXIES);

describe("the client key", () => {
  it("is the socket's address when the peer is not a trusted proxy, whatever the header says", () => {
    expect(clientKey(forwarded("198.51.100.1"), "203.0.113.9", defaults)).toBe("203.0.113.9");
    expect(clientKey(forwarded(), "203.0.113.9", defaults)).toBe("203.0.113.9");
    const none = trustedProxies("none");
    expect(clientKey(forwarded("198.51.100.1"), "127.0.0.1", none)).toBe("127.0.0.1");
  });

  it("is the address a trusted proxy appended: the last entry, not what the client wrote first", () => {
    // The master on a private network appended what its socket saw; the first entry is forged.
    const headers = forwarded("1.1.1.1, 203.0.113.9");
    expect(clientKey(headers, "172.18.0.2", defaults)).toBe("203.0.113.9");
    expect(clientKey(headers, "::ffff:127.0.0.1", defaults)).toBe("203.0.113.9");
  });

  it("walks through trusted hops to the first untrusted one", () => {
    // client -> nginx (10.0.0.5) -> master (172.18.0.2) -> this service
    const headers = forwarded("1.1.1.1, 203.0.113.9, 10.0.0.5");
    expect(clientKey(headers, "172.18.0.2", defaults)).toBe("203.0.113.9");
    // Every hop trusted: the leftmost one a trusted hop vouches for.
    expect(clientKey(forwarded("10.1.1.1, 10.0.0.5"), "127.0.0.1", defaults)).toBe("10.1.1.1");
    // A hop that is not an address stops the walk at the trusted hop that passed it on.
    expect(clientKey(forwarded("203.0.113.9, unknown"), "127.0.0.1", defaults)).toBe("127.0.0.1");
    expect(clientKey(forwarded("203.0.113.9, 10.0.0.5:8080"), "127.0.0.1", defaults)).toBe(
      "127.0.0.1",
    );
  });

  it("keys an IPv6 client by its /64, and a mapped IPv4 one by its IPv4 address", () => {
    for (const address of [
      "2001:db8:1:2::a",
      "2001:DB8:1:2:ffff:ffff:ffff:ffff",
      "[2001:db8:1:2::7]",
    ]) {
      expect(clientKey(forwarded(), address.replace(/[[\]]/g, ""), defaults)).toBe(
        "2001:db8:1:2::/64",
      );
      expect(clientKey(forwarded(address), "127.0.0.1", defaults)).toBe("2001:db8:1:2::/64");
    }
    expect(clientKey(forwarded(), "2001:db8::1", defaults)).toBe("2001:db8:0:0::/64");
    expect(clientKey(forwarded(), "::ffff:203.0.113.9", defaults)).toBe("203.0.113.9");
    expect(clientKey(forwarded(), undefined, defaults)).toBe("local");
  });

  it("reads TRUSTED_PROXIES: addresses, ranges, loopback, private, none; names a bad entry", () => {
    const list = trustedProxies("loopback, 203.0.113.0/24, 2001:db8::7");
    expect(list.has("127.0.0.1")).toBe(true);
    expect(list.has("203.0.113.200")).toBe(true);
    expect(list.has("2001:db8::7")).toBe(true);
    expect(list.has("10.0.0.1")).toBe(false);
    expect(defaults.has("10.0.0.1")).toBe(true);
    expect(defaults.has("fd00::1")).toBe(true);
    expect(defaults.has("100.64.0.1")).toBe(false);
    expect(trustedProxies("none").has("127.0.0.1")).toBe(false);
    for (const bad of ["localhost", "10.0.0.0/33", "10.0.0.1/8/1", "::1/129", "10.0.0.0/x"]) {
      expect(() => trustedProxies(`loopback, ${bad}`), bad).toThrow(JSON.stringify(bad));
    }
    // At start, a bad value is a configuration error naming the variable.
    const config = {
      SECRET_KEY_GENERATE: true,
      ATTESTATION_VERIFIER: "dev" as const,
      SUBMISSION_WINDOW_SECONDS: 0,
      REPLAY_AUDIT_RATE: 0,
      TRUSTED_PROXIES: "loopback, localhost",
      WEIGHTS_MODE: "winner_take_all" as const,
    };
    expect(() => resolveSettings(config, { tokenConfigured: false })).toThrow(/TRUSTED_PROXIES/);
    expect(
      resolveSettings({ ...config, TRUSTED_PROXIES: "none" }, { tokenConfigured: false })
        .trustedProxies,
    ).toBe("none");
  });
});

describe("the feed slots", () => {
  it("refuses past a client's share, a submission's, then the pool; frees a slot once", () => {
    const slots = new FeedSlots({ total: 4, perClient: 2, perSubmission: 2 });
    const a1 = slots.take("a", 1);
    if ("refused" in a1) throw new Error("the first slot was refused");
    expect(slots.take("a", 2)).not.toHaveProperty("refused");
    expect(slots.take("a", 3)).toEqual({ refused: "client" });
    expect(slots.take("b", 1)).not.toHaveProperty("refused");
    expect(slots.take("c", 1)).toEqual({ refused: "submission" });
    expect(slots.take("c", 3)).not.toHaveProperty("refused");
    expect(slots.take("d", 4)).toEqual({ refused: "total" });
    expect(slots.count()).toBe(4);
    a1.release();
    a1.release();
    expect(slots.count()).toBe(3);
    expect(slots.count("a")).toBe(1);
    expect(slots.take("c", 1)).not.toHaveProperty("refused");
  });
});
