// The client key behind the master's proxy: X-Forwarded-For counts only when a trusted proxy
// sends it, walked right to left through trusted hops; an IPv6 client is its /64; a bad
// TRUSTED_PROXIES entry is named.
import { describe, expect, it } from "vitest";
import { clientKey, DEFAULT_TRUSTED_PROXIES, trustedProxies } from "./client-address.js";

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

  it("ignores the client's padding, and reads no more than 16 entries from the right", () => {
    // A thousand forged entries before the master's changes nothing.
    const padding = Array.from({ length: 1000 }, (_, i) => `198.51.100.${i % 256}`).join(", ");
    expect(clientKey(forwarded(`${padding}, 203.0.113.9`), "127.0.0.1", defaults)).toBe(
      "203.0.113.9",
    );
    // Trusted hops all the way: the walk stops at the 16th entry from the right.
    const hops = Array.from({ length: 20 }, (_, i) => `10.0.0.${i + 1}`).join(", ");
    expect(clientKey(forwarded(hops), "127.0.0.1", defaults)).toBe("10.0.0.5");
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
  });
});
