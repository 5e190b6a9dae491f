// pgSafeText and pgSafeJson against the real databases: what PostgreSQL refuses raw (NUL, lone
// surrogates, in text and in jsonb, keys included) is stored once cleaned, and what it accepts
// comes back unchanged.
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_REPLACEMENT_CHARACTER, pgSafeJson, pgSafeText } from "./pg-safe-text.js";

const R = PG_REPLACEMENT_CHARACTER;

/** Strings a hostile submission can put in front of the database, and what is stored of each. */
const HOSTILE: [string, string, string][] = [
  ["NUL", "a\u0000b", `a${R}b`],
  ["NUL alone", "\u0000", R],
  ["a lone high surrogate", "x\uD800y", `x${R}y`],
  ["a lone high surrogate at the end", "x\uDBFF", `x${R}`],
  ["a lone low surrogate", "\uDC00z", `${R}z`],
  ["two high surrogates then a low one", "\uD800\uD83D\uDE00", `${R}\u{1F600}`],
  ["a reversed pair", "\uDE00\uD83D", `${R}${R}`],
];
/** Strings PostgreSQL stores as they are: left alone. */
const KEPT = ["plain", "\uFFFF noncharacter", "\u{1F600} a real pair", "\u0001\u001f\u007f", ""];

describe("pgSafeText", () => {
  it.each(HOSTILE)("replaces %s with U+FFFD", (_name, raw, safe) => {
    expect(pgSafeText(raw)).toBe(safe);
  });
  it.each(KEPT)("keeps %j as it is", (text) => {
    expect(pgSafeText(text)).toBe(text);
  });
});

describe("pgSafeJson", () => {
  it("cleans every string, object keys included, at any depth, as JSON.stringify would write it", () => {
    const value = {
      "k\u0000": ["a\uD800", { deep: { deeper: ["\uDC00", 1, null, true] } }],
      when: new Date(0),
      gone: undefined,
      nan: Number.NaN,
    };
    expect(pgSafeJson(value)).toEqual({
      [`k${R}`]: [`a${R}`, { deep: { deeper: [R, 1, null, true] } }],
      when: "1970-01-01T00:00:00.000Z",
      nan: null,
    });
  });
  it("keeps a __proto__ key a plain key", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted\\u0000": 1}}') as object;
    const safe = pgSafeJson(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(safe)).toBe(Object.prototype);
    expect(Object.keys(safe)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)[`polluted${R}`]).toBeUndefined();
  });
  it("refuses a value with no JSON form", () => {
    expect(() => pgSafeJson(undefined)).toThrow(TypeError);
  });
});

describe.each(await testBackends())("what PostgreSQL stores (%s)", (backend) => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
    await db.sql`create table notes (id serial primary key, body text, doc jsonb)`;
  });
  afterAll(() => db?.close());

  it.each(HOSTILE.filter(([, raw]) => raw.includes("\u0000")))(
    "refuses %s raw in text, and stores it cleaned",
    async (_name, raw, safe) => {
      await expect(db.sql`insert into notes (body) values (${raw})`).rejects.toMatchObject({
        code: "22021",
      });
      const [row] = await db.sql<{ body: string }[]>`
        insert into notes (body) values (${pgSafeText(raw)}) returning body`;
      expect(row!.body).toBe(safe);
    },
  );

  it.each(HOSTILE)("refuses %s raw in jsonb, and stores it cleaned", async (_name, raw, safe) => {
    const doc = { [raw]: [raw, { nested: raw }] };
    await expect(
      db.sql`insert into notes (doc) values (${db.sql.json(doc as never)})`,
    ).rejects.toMatchObject({ code: expect.stringMatching(/^22/) });
    const [row] = await db.sql<{ doc: unknown }[]>`
      insert into notes (doc) values (${db.sql.json(pgSafeJson(doc) as never)}) returning doc`;
    expect(row!.doc).toEqual({ [safe]: [safe, { nested: safe }] });
  });

  it.each(KEPT)("stores %j unchanged in text and jsonb", async (text) => {
    const [row] = await db.sql<{ body: string; doc: unknown }[]>`
      insert into notes (body, doc)
      values (${pgSafeText(text)}, ${db.sql.json(pgSafeJson({ text }) as never)})
      returning body, doc`;
    expect(row).toEqual({ body: text, doc: { text } });
  });
});
