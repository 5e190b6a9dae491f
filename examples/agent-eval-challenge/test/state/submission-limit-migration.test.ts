// Migration 0008 moved the per-hotkey submission window into the SDK's count: a window still open
// at upgrade must keep its hotkey waiting (no free submission), an expired one must not.
import { readdirSync, readFileSync } from "node:fs";
import { testBackends, testDatabase } from "@platform/challenge-sdk/testing";
import { describe, expect, it } from "vitest";
import { storeSubmission } from "../../src/submissions/submission-store.js";
import { insertSubmission, MIGRATIONS, sha256Hex } from "../agent-eval-database.js";

/** This challenge's migrations up to and including `version`. */
function migrationsUpTo(version: number) {
  return readdirSync(MIGRATIONS)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file) && Number(file.slice(0, 4)) <= version)
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(new URL(file, MIGRATIONS), "utf8"),
    }));
}

describe.each(await testBackends())("migration 0008 on %s", (backend) => {
  it("carries open windows into the SDK's count and drops the old table", async () => {
    const db = await testDatabase(migrationsUpTo(7), { backend });
    try {
      const { sql } = db;
      const open = await insertSubmission(sql, { hotkey: "5Open" });
      const over = await insertSubmission(sql, { hotkey: "5Over" });
      await sql`insert into hotkey_submission_windows (hotkey, submission_id, accepted_at, next_allowed_at)
        values ('5Open', ${open}, now() - interval '1 hour', now() + interval '2 hours'),
               ('5Over', ${over}, now() - interval '4 hours', now() - interval '1 hour')`;
      await sql.unsafe(migrationsUpTo(8).at(-1)!.sql);

      const [table] = await sql<{ name: string | null }[]>`
        select to_regclass('hotkey_submission_windows')::text as name`;
      expect(table!.name).toBeNull();
      const store = (hotkey: string) => {
        const artifact = Buffer.from(`PK\x03\x04 ${hotkey} ${Math.random()}`);
        return storeSubmission(sql, {
          hotkey,
          name: "agent",
          filename: "agent.zip",
          via: "signed",
          artifact,
          sha256: sha256Hex(artifact),
          windowSeconds: 3 * 3600,
        });
      };
      // The open window still holds, until the time it held until.
      const refused = await store("5Open").catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 429, code: "submission_rate_limited" });
      const next = Date.parse(
        String((refused as { extra: Record<string, unknown> }).extra["next_allowed_at"]),
      );
      const [now] = await sql<{ now: Date }[]>`select now() + interval '2 hours' as now`;
      expect(Math.abs(next - now!.now.getTime())).toBeLessThan(5_000);
      // The expired one was not carried: that hotkey submits at once.
      await expect(store("5Over")).resolves.toMatchObject({ hotkey: "5Over" });
    } finally {
      await db.close();
    }
  });
});
