// Races, on both databases: on PostgreSQL the writers really overlap (a blocker holds the row
// until every contender waits on it); on PGlite, which is one session, they queue, and the same
// guarantees must hold.
import { randomBytes } from "node:crypto";
import { HttpError, type Sql, type TransactionSql } from "@platform/challenge-sdk";
import { testBackends, waitFor } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AssignmentEvent,
  type AssignmentRecords,
  appendStatusEvent,
  transitionAssignment,
} from "../../src/state/index.js";
import { storeSubmission } from "../../src/submissions/submission-store.js";
import {
  agentEvalDatabase,
  insertSubmission,
  seedAssignment,
  sha256Hex,
  statusEvents,
} from "../agent-eval-database.js";

/** Waits until `count` other sessions of this database wait on a lock (PostgreSQL only). */
async function waitForLockWaiters(sql: Sql, count: number): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`;
      return row!.n >= count;
    },
    { timeoutMs: 30_000, intervalMs: 10, what: `${count} lock waiters` },
  );
}

/**
 * A transaction that takes a row lock with `lock` and keeps it until `release()`. `holding`
 * resolves once the lock is taken: contenders started before that could take the row first, and
 * then the blocker itself waits, one contender runs through, and the count of waiters the test
 * waits for never comes (seen as a 30 s timeout).
 */
function holdLock(sql: Sql, lock: (tx: TransactionSql) => PromiseLike<unknown>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const done = sql.begin(async (tx) => {
    await lock(tx);
    locked();
    await released;
  });
  // A blocker that fails before it holds the lock must fail the wait too, not leave it hanging.
  return { holding: Promise.race([holding, done.then(() => {})]), release, done };
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
      const blocker = holdLock(
        sql,
        (tx) => tx`select id from review_assignments where id = ${seeded.assignmentId} for update`,
      );
      await blocker.holding;
      const racing = race();
      try {
        await waitForLockWaiters(sql, contenders.length);
      } finally {
        blocker.release();
      }
      await blocker.done;
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
    const windowSeconds = 3 * 60 * 60;
    const submit = () => {
      const artifact = Buffer.concat([Buffer.from("PK\x03\x04"), randomBytes(16)]);
      return storeSubmission(sql, {
        hotkey,
        name: "agent",
        filename: "agent.zip",
        via: "signed",
        artifact,
        sha256: sha256Hex(artifact),
        windowSeconds,
      });
    };
    const race = () => Promise.allSettled([submit(), submit()]);
    let outcomes: PromiseSettledResult<unknown>[];
    if (backend === "postgres") {
      // The hotkey's count row exists (one acceptance long out of the window); a blocker holds
      // it until both contenders have stored their submission and wait on it, then lets them go.
      await sql`insert into sdk_rate_limits (bucket, hotkey, hits, window_seconds)
        values ('agent-eval submissions', ${hotkey}, array[now() - interval '4 hours'], ${windowSeconds})`;
      const blocker = holdLock(
        sql,
        (tx) => tx`select 1 from sdk_rate_limits
                   where bucket = 'agent-eval submissions' and hotkey = ${hotkey} for update`,
      );
      await blocker.holding;
      const racing = race();
      try {
        await waitForLockWaiters(sql, 2);
      } finally {
        blocker.release();
      }
      await blocker.done;
      outcomes = await racing;
    } else {
      outcomes = await race();
    }
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === "rejected") {
        expect(o.reason).toMatchObject({ status: 429, code: "submission_rate_limited" });
      }
    }
    // The refused one stored nothing: no submission, no second count (the expired one is gone).
    const rows = await sql`select id from submissions where hotkey = ${hotkey}`;
    expect(rows).toHaveLength(1);
    const [count] = await sql<{ hits: number }[]>`
      select cardinality(hits) as hits from sdk_rate_limits
      where bucket = 'agent-eval submissions' and hotkey = ${hotkey}`;
    expect(count?.hits).toBe(1);
    // The window slides by the database's clock: once the accepted one is 3 h old (moved back by
    // now()), the hotkey may submit again, and only once.
    await sql`update sdk_rate_limits set hits = array[now() - interval '3 hours 1 second']
      where bucket = 'agent-eval submissions' and hotkey = ${hotkey}`;
    await expect(submit()).resolves.toMatchObject({ hotkey });
    await expect(submit()).rejects.toMatchObject({ status: 429 });
  });
});
