import { describe, expect, it } from "vitest";
import { ActiveChallengeCache } from "./active-challenge-cache.js";
import type { ChallengeRow } from "./challenge-row.js";

const row = (slug: string) => ({ slug }) as ChallengeRow;

describe("ActiveChallengeCache", () => {
  it("answers within its ttl, then forgets", () => {
    const cache = new ActiveChallengeCache(1000);
    cache.set("a", row("a"), 0);
    expect(cache.get("a", 999)?.slug).toBe("a");
    expect(cache.get("a", 1000)).toBeUndefined();
  });

  it("remembers misses, so unknown slugs do not each cost a query", () => {
    const cache = new ActiveChallengeCache(1000);
    cache.set("ghost", null, 0);
    expect(cache.get("ghost", 10)).toBeNull();
  });

  it("forgets a slug on invalidate, and caches nothing with a zero ttl", () => {
    const cache = new ActiveChallengeCache(1000);
    cache.set("a", row("a"), 0);
    cache.invalidate("a");
    expect(cache.get("a", 1)).toBeUndefined();
    const off = new ActiveChallengeCache(0);
    off.set("a", row("a"), 0);
    expect(off.get("a", 0)).toBeUndefined();
  });

  it("stays bounded, evicting the oldest entry", () => {
    const cache = new ActiveChallengeCache(1000, 2);
    cache.set("a", row("a"), 0);
    cache.set("b", row("b"), 0);
    cache.set("c", row("c"), 0);
    expect(cache.get("a", 1)).toBeUndefined();
    expect(cache.get("c", 1)?.slug).toBe("c");
  });
});
