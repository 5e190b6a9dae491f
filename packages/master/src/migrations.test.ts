import { validatorMigrations } from "@platform/chain";
import { migrate } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { describe, expect, it } from "vitest";
import { masterMigrations } from "./migrations.js";

describe("masterMigrations", () => {
  it("are the master's own and the validator's tables from @platform/chain, numbered 1..n once each", async () => {
    const master = await masterMigrations();
    expect(master.map((m) => m.version)).toEqual(master.map((_, i) => i + 1));
    // The very files a standalone validator applies, so the two can never drift.
    for (const migration of await validatorMigrations()) {
      expect(master.find((m) => m.version === migration.version)).toEqual(migration);
    }
  });
});

describe.each(await testBackends())("the master's database on %s", (backend) => {
  it("takes a validator's migrations under the validator's namespace (the tables already there)", async () => {
    const db = await createTestDatabase({ backend });
    try {
      await migrate(db.sql, { namespace: "master", migrations: await masterMigrations() });
      const [tables] = await db.sql<{ submissions: string | null; snapshots: string | null }[]>`
        select to_regclass('chain_weight_submissions')::text as submissions,
               to_regclass('validator_snapshots')::text as snapshots`;
      expect(tables).toEqual({
        submissions: "chain_weight_submissions",
        snapshots: "validator_snapshots",
      });
      const again = await migrate(db.sql, {
        namespace: "validator",
        migrations: await validatorMigrations(),
      });
      expect(again.applied).toEqual([
        { version: 5, name: "chain_submissions" },
        { version: 6, name: "commit_reveal" },
      ]);
    } finally {
      await db.close();
    }
  });
});
