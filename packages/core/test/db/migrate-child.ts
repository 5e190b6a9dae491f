// One racer of the two-process migration test: connects to the URL in argv, prints "ready", waits
// for a line on stdin so both racers start together, migrates the race fixtures, prints the result.
import { once } from "node:events";
import { loadMigrations, migrate, openDatabase } from "../../src/db/index.js";

const url = process.argv[2];
if (!url) throw new Error("usage: migrate-child.ts <database url>");

const db = await openDatabase({ url });
try {
  const migrations = await loadMigrations(new URL("./fixtures/race/", import.meta.url));
  process.stdout.write("ready\n");
  await once(process.stdin, "data");
  const result = await migrate(db.sql, { namespace: "race", migrations });
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await db.close();
  process.stdin.destroy();
}
