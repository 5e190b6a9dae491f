import type { Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runReport } from "../../test/run-report.js";
import { insertSubmission, scoringDatabase } from "../../test/scoring-database.js";
import { COPY_DISTANCE } from "../behaviour-signature.js";
import type { BehaviourSignature, RunReport } from "../harness-report.js";
import { behaviourMessage, behaviourStage } from "./behaviour-stage.js";

const STREAM = "ab".repeat(32);
const OTHER_STREAM = "cd".repeat(32);
/** A 64-point curve falling from 5 to 2 nats per byte, every point moved by `shift`. */
const curve = (shift = 0): BehaviourSignature => ({
  bucket_bytes: 2032,
  losses: Array.from({ length: 64 }, (_, i) => 5 - (3 * i) / 63 + shift),
});
const report = (behaviour: BehaviourSignature | undefined, stream = STREAM): RunReport => {
  const base = runReport({ stream_sha256: stream });
  return behaviour === undefined ? base : { ...base, behaviour };
};

describe.each(await testBackends())("the behavioural copy check on %s", (backend) => {
  let db: Awaited<ReturnType<typeof scoringDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await scoringDatabase(backend);
    sql = db.sql;
  });
  afterAll(() => db?.close());
  beforeEach(async () => {
    await sql`delete from submissions`;
  });

  /** A submission with `status` whose stored run report is `stored`. */
  const scored = async (status: string, stored: RunReport | null) => {
    const id = await insertSubmission(sql, { status });
    await sql`update submissions set report = ${stored === null ? null : sql.json(stored as never)}
              where id = ${id}::bigint`;
    return id;
  };

  it("names the earliest earlier accepted run on the same bytes within the seed noise", async () => {
    const unrelated = await scored("completed", report(curve(0.5)));
    const original = await scored("completed", report(curve()));
    const reseeded = await scored("completed", report(curve(0.03)));
    const copy = await scored("running", null);
    const match = await behaviourStage(sql, copy, report(curve(0.01)));
    expect(match).toEqual({ submissionId: original, distance: expect.closeTo(0.01, 9) });
    expect(behaviourMessage(match!)).toContain(`computes what submission ${original} computes`);
    // The run before all of them has nothing earlier to copy; the unrelated one matches nothing.
    expect(await behaviourStage(sql, unrelated, report(curve()))).toBeNull();
    expect(await behaviourStage(sql, reseeded, report(curve(0.03)))).toMatchObject({
      submissionId: original,
    });
  });

  it("counts only completed runs, scored on the same stream, with a signature, before this one", async () => {
    await scored("rejected", report(curve())); // itself a copy, or refused: protects nobody
    await scored("failed", report(curve()));
    await scored("completed", report(curve(), OTHER_STREAM)); // other bytes: curves do not compare
    await scored("completed", report(undefined)); // a report of a harness before the signature
    await scored("completed", null);
    const id = await scored("running", null);
    const later = await scored("completed", report(curve()));
    // `later` is completed with the same curve, but after this one: the earlier one keeps it.
    expect(await behaviourStage(sql, id, report(curve()))).toBeNull();
    // A run without a signature is compared with nothing.
    expect(await behaviourStage(sql, later, report(undefined))).toBeNull();
  });

  it("takes a distance equal to the threshold as a copy, and one beyond it as another model", async () => {
    const original = await scored("completed", report(curve()));
    const id = await scored("running", null);
    const at = await behaviourStage(sql, id, report(curve(COPY_DISTANCE)), COPY_DISTANCE + 1e-12);
    expect(at?.submissionId).toBe(original);
    expect(await behaviourStage(sql, id, report(curve(COPY_DISTANCE * 1.01)))).toBeNull();
  });

  it("skips a stored signature of another shape instead of failing the check", async () => {
    const id = await insertSubmission(sql, { status: "completed" });
    await sql`update submissions
              set report = ${sql.json({ stream_sha256: STREAM, behaviour: { losses: "x" } } as never)}
              where id = ${id}::bigint`;
    const next = await scored("running", null);
    expect(await behaviourStage(sql, next, report(curve()))).toBeNull();
  });
});
