// The example bundles (bundles/*.zip, built by bundles/make-zips) through the bundle stage and
// the duplicate check: each opens, and the duplicate is caught as a near-copy of good.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openBundle } from "../src/bundle/index.js";
import { fingerprint, jaccard, NEAR_DUPLICATE_THRESHOLD } from "../src/near-duplicate.js";

const dir = new URL("../bundles/", import.meta.url);
const zips = existsSync(dir)
  ? readdirSync(dir)
      .filter((name) => name.endsWith(".zip"))
      .sort()
  : [];

async function open(name: string) {
  const result = await openBundle(readFileSync(new URL(name, dir)));
  if (!result.ok) throw new Error(`${name}: ${result.error.message}`);
  return result.value;
}

describe.runIf(zips.length > 0)("the example bundles", () => {
  it.each(zips)("%s passes the bundle stage", async (name) => {
    const bundle = await open(name);
    expect(bundle.files.map((file) => file.path)).toEqual(
      expect.arrayContaining(["architecture.py", "training.py"]),
    );
  });

  it.runIf(zips.includes("good.zip") && zips.includes("duplicate.zip"))(
    "duplicate.zip is a near-copy of good.zip, and no other bundle is",
    async () => {
      const good = fingerprint((await open("good.zip")).files);
      for (const name of zips.filter((zip) => zip !== "good.zip")) {
        const similarity = jaccard(good.shingles, fingerprint((await open(name)).files).shingles);
        if (name === "duplicate.zip")
          expect(similarity, name).toBeGreaterThanOrEqual(NEAR_DUPLICATE_THRESHOLD);
        else expect(similarity, name).toBeLessThan(NEAR_DUPLICATE_THRESHOLD);
      }
    },
  );
});
