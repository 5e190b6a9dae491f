import { describe, expect, it } from "vitest";
import { deferredValue, VersionedStore } from "./_versioned-store.js";

const v = (n: number) => new Uint8Array([n]);

describe("versioned store", () => {
  it("reads each key as it was at any retained block", () => {
    const store = new VersionedStore(10);
    store.begin(1);
    store.set("0xaa01", v(1));
    store.begin(2);
    store.set("0xaa01", v(2));
    store.set("0xaa02", v(9));
    store.begin(3);
    store.set("0xaa01", null);
    expect(store.get("0xaa01", 0)).toBeNull();
    expect(store.get("0xaa01", 1)).toEqual(v(1));
    expect(store.get("0xaa01", 2)).toEqual(v(2));
    expect(store.get("0xaa01", 3)).toBeNull();
    expect(store.get("0xaa02", 1)).toBeNull();
    expect(store.get("0xaa02")).toEqual(v(9));
  });

  it("keeps the last write of a block and a digest of the block's writes", () => {
    const a = new VersionedStore(10);
    const b = new VersionedStore(10);
    for (const store of [a, b]) store.begin(1);
    a.set("0x01", v(1));
    b.set("0x01", v(2));
    expect(a.writesDigest()).not.toEqual(b.writesDigest());
    b.set("0x01", v(1));
    expect(b.get("0x01", 1)).toEqual(v(1));
  });

  it("pages keys by prefix in byte order, after a start key, at a block", () => {
    const store = new VersionedStore(100);
    store.begin(1);
    for (const k of ["0xbb03", "0xaa02", "0xaa01", "0xaa0a", "0xaa"]) store.set(k, v(1));
    store.begin(2);
    store.set("0xaa05", v(1));
    store.set("0xaa02", null);
    expect(store.keysPaged("0xaa", 10, undefined, 1)).toEqual([
      "0xaa",
      "0xaa01",
      "0xaa02",
      "0xaa0a",
    ]);
    expect(store.keysPaged("0xaa", 10, undefined, 2)).toEqual([
      "0xaa",
      "0xaa01",
      "0xaa05",
      "0xaa0a",
    ]);
    expect(store.keysPaged("0xaa", 2, undefined, 2)).toEqual(["0xaa", "0xaa01"]);
    expect(store.keysPaged("0xaa", 2, "0xaa01", 2)).toEqual(["0xaa05", "0xaa0a"]);
    expect(store.keysPaged("0xaa", 2, "0xaa0a", 2)).toEqual([]);
    expect(store.keysPaged("0x", 10, "0xaa0a", 2)).toEqual(["0xbb03"]);
  });

  it("drops history no retained block can read, and keys deleted before it", () => {
    const store = new VersionedStore(4);
    store.begin(1);
    store.set("0x01", v(1));
    store.set("0x02", v(1));
    for (let n = 2; n <= 20; n++) {
      store.begin(n);
      store.set("0x01", v(n));
      if (n === 3) store.set("0x02", null);
    }
    // Blocks 16..20 are retained and read correctly.
    for (let n = 16; n <= 20; n++) expect(store.get("0x01", n)).toEqual(v(n));
    expect(store.get("0x02", 20)).toBeNull();
    expect(store.size).toBe(1);
  });

  it("computes a deferred value once, on its first read, and never to page keys or digest a block", () => {
    let computed = 0;
    const lazy = deferredValue(v(42), () => {
      computed += 1;
      return v(7);
    });
    const a = new VersionedStore(10);
    a.begin(1);
    a.set("0xcc01", lazy);
    const digest = a.writesDigest();
    expect(a.keysPaged("0xcc", 10, undefined, 1)).toEqual(["0xcc01"]);
    expect(a.has("0xcc01")).toBe(true);
    expect(computed).toBe(0);
    expect(a.get("0xcc01")).toEqual(v(7));
    expect(a.get("0xcc01", 1)).toEqual(v(7));
    expect(computed).toBe(1);
    // The digest stands for the value whether or not it was computed.
    expect(a.writesDigest()).toEqual(digest);
    const b = new VersionedStore(10);
    b.begin(1);
    b.set(
      "0xcc01",
      deferredValue(v(43), () => v(7)),
    );
    expect(b.writesDigest()).not.toEqual(digest);
  });
});
