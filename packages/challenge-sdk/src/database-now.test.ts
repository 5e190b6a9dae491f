import type { Database } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseNow } from "./database-now.js";

describe.each(await testBackends())("databaseNow on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase({ backend });
  });
  afterAll(() => db?.close());

  it("reads the database's clock; inside a transaction, the time it started", async () => {
    const [row] = await db.sql<{ now: Date }[]>`select now() as now`;
    const read = await databaseNow(db.sql);
    expect(read).toBeInstanceOf(Date);
    expect(read.getTime()).toBeGreaterThanOrEqual(row!.now.getTime());
    const [first, second] = await db.sql.begin(async (tx) => {
      const a = await databaseNow(tx);
      await tx`select pg_sleep(0.02)`;
      return [a, await databaseNow(tx)] as const;
    });
    // One transaction, one time: every expiry it writes agrees.
    expect(second.getTime()).toBe(first.getTime());
  });
});
