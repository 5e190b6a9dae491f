// Races, on both databases: on PostgreSQL the writers really overlap (a blocker holds the row
// until every contender waits on it, or a barrier holds them all inside their transactions); on
// PGlite, which is one session, they queue, and the same guarantees must hold.
import { HttpError, type Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AssignmentEvent,
  type AssignmentRecords,
  appendStatusEvent,
  reserveSubmissionWindow,
  transitionAssignment,
} from "../../src/state/index.js";
import {
  agentEvalDatabase,
  insertSubmission,
  seedAssignment,
  statusEvents,
} from "../agent-eval-database.js";

/** Waits until `count` other sessions of this database wait on a lock (PostgreSQL only). */
async function waitForLockWaiters(sql: Sql, count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`;
    if (row!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never saw ${count} lock waiters`);
}

/** Resolves once `parties` callers have arrived. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return () => {
    arrived += 1;
    if (arrived === parties) open();
    return opened;
  };
}

describe.each(await testBackends())("concurrent state changes on %s", (backend) => {
  let db: Awaited<ReturnType<typeof agentEvalDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await agentEvalDatabase(backend);
    sql = db.sql;
  });
  afterAll(() => db?.close());

  it("lets exactly one of several compare-and-swaps from the same state win", async () => {
    const seeded = await sql.begin((tx) => seedAssignment(tx, "queued"));
    // Two contenders (with the blocker and the lock monitor they fill the test pool of 4), whose
    // events exclude each other: cancelled cannot fail, error cannot be cancelled.
    const contenders: { event: AssignmentEvent; records: AssignmentRecords }[] = [
      { event: "cancel", records: {} },
      { event: "fail", records: { failure: { reason: "vm crashed" } } },
    ];
    const race = () =>
      Promise.allSettled(
        contenders.map(({ event, records }) =>
          sql.begin((tx) =>
            transitionAssignment(tx, {
              assignmentId: seeded.assignmentId,
              event,
              records,
              actor: "miner",
            }),
          ),
        ),
      );
    let results: PromiseSettledResult<unknown>[];
    if (backend === "postgres") {
      // Hold the row so every contender reads "queued", then blocks in its UPDATE; release them
      // together: all but one must find the state gone (a lost compare-and-swap, not a no-op).
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const blocker = sql.begin(async (tx) => {
        await tx`select id from review_assignments where id = ${seeded.assignmentId} for update`;
        await released;
      });
      const racing = race();
      try {
        await waitForLockWaiters(sql, contenders.length);
      } finally {
        release();
      }
      await blocker;
      results = await racing;
    } else {
      results = await race();
    }
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(contenders.length - 1);
    for (const { reason } of lost) {
      expect(reason).toBeInstanceOf(HttpError);
      expect((reason as HttpError).status).toBe(409);
      // Overlapping writers lose the compare-and-swap; queued ones find the event forbidden.
      const expected = backend === "postgres" ? ["transition_conflict"] : ["invalid_transition"];
      expect(expected).toContain((reason as HttpError).code);
    }
    // Only the winner wrote: one assignment event and one submission event, seqs 1 and 2.
    const events = await statusEvents(sql, seeded.submissionId);
    expect(events.map((e) => [e.seq, e.machine])).toEqual([
      [1, "assignment"],
      [2, "submission"],
    ]);
    const [row] = await sql`select state from review_assignments where id = ${seeded.assignmentId}`;
    expect(row!["state"]).toBe(events[0]!.to_state);
  });

  it("numbers a submission's events gap-free and uniquely under concurrent writers, rollbacks included", async () => {
    const id = await insertSubmission(sql);
    const writers = 12;
    const outcomes = await Promise.allSettled(
      Array.from({ length: writers }, (_, i) =>
        sql.begin(async (tx) => {
          const seqs = [];
          for (const step of [0, 1]) {
            seqs.push(
              await appendStatusEvent(tx, {
                submissionId: id,
                machine: "submission",
                subjectId: id,
                event: `writer_${i}_${step}`,
                fromState: "received",
                toState: "received",
                actor: "system",
              }),
            );
          }
          // Every third writer fails after taking its numbers: they must come back.
          if (i % 3 === 0) throw new Error("rolled back on purpose");
          return seqs;
        }),
      ),
    );
    const committed = outcomes.filter((o) => o.status === "fulfilled");
    expect(committed).toHaveLength(8);
    const events = await statusEvents(sql, id);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    // A writer's two events are adjacent: the counter's row lock is held until commit.
    for (let i = 0; i < events.length; i += 2) {
      expect(events[i]!.event.replace(/_0$/, "")).toBe(events[i + 1]!.event.replace(/_1$/, ""));
    }
    const [row] = await sql`select last_event_seq from submissions where id = ${id}`;
    expect(row!["last_event_seq"]).toBe(16);
  });

  it("accepts one submission per hotkey per window, however many arrive at once", async () => {
    const hotkey = `5Window${backend}`;
    const parties = 3;
    // On PostgreSQL all three transactions have inserted their submission before any reserves.
    const arrive = backend === "postgres" ? barrier(parties) : async () => {};
    const attempt = () =>
      sql.begin(async (tx) => {
        const submissionId = await insertSubmission(tx, { hotkey });
        await arrive();
        const reservation = await reserveSubmissionWindow(tx, { hotkey, submissionId });
        if (!reservation.reserved) {
          throw new HttpError(429, "rate_limited", "one submission per window", {
            extra: { next_allowed_at: reservation.nextAllowedAt.toISOString() },
          });
        }
        return submissionId;
      });
    const outcomes = await Promise.allSettled(Array.from({ length: parties }, attempt));
    const accepted = outcomes.filter((o) => o.status === "fulfilled");
    expect(accepted).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === "rejected") expect((o.reason as HttpError).status).toBe(429);
    }
    const rows = await sql`select id from submissions where hotkey = ${hotkey}`;
    expect(rows).toHaveLength(1);
    // After the window, the hotkey may submit again.
    const later = new Date(Date.now() + 3 * 60 * 60 * 1000 + 1000);
    const again = await sql.begin(async (tx) => {
      const submissionId = await insertSubmission(tx, { hotkey });
      return reserveSubmissionWindow(tx, { hotkey, submissionId, now: later });
    });
    expect(again.reserved).toBe(true);
    // Just before the end of that new window, it may not.
    const tooSoon = await sql.begin(async (tx) => {
      const submissionId = await insertSubmission(tx, { hotkey });
      return reserveSubmissionWindow(tx, {
        hotkey,
        submissionId,
        now: new Date(later.getTime() + 3 * 60 * 60 * 1000 - 1000),
      });
    });
    expect(tooSoon).toEqual({ reserved: false, nextAllowedAt: again.nextAllowedAt });
  });
});
