import { testBackends } from "@platform/challenge-sdk/testing";
import { describe, expect, it } from "vitest";
import { scoringDatabase } from "../test/scoring-database.js";
import { windowSecret } from "./window-secret.js";

describe.each(await testBackends())("the window secret on %s", (backend) => {
  it("is made once and read back alike by every instance on the database", async () => {
    const db = await scoringDatabase(backend);
    try {
      const [first, second] = await Promise.all([windowSecret(db.sql), windowSecret(db.sql)]);
      expect(first.length).toBe(32);
      expect(second).toEqual(first);
      expect(await windowSecret(db.sql)).toEqual(first);
      const rows = await db.sql`select name from scoring_secrets`;
      expect(rows.length).toBe(1);
    } finally {
      await db.close();
    }
  });

  it("is the operator's when configured, without storing one", async () => {
    const db = await scoringDatabase(backend);
    try {
      const configured = "ab".repeat(32);
      expect((await windowSecret(db.sql, configured)).toString("hex")).toBe(configured);
      expect((await db.sql`select name from scoring_secrets`).length).toBe(0);
    } finally {
      await db.close();
    }
  });
});
