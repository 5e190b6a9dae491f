// The migration's guarantees, on both databases: what the tables refuse matters as much as what
// they store. Each refusal is attempted with the write an attacker or a buggy route would send.
import type { Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentEvalDatabase,
  inRolledBackTransaction,
  insertSubmission,
  newId,
  seedAssignment,
  seedRun,
  sha256Hex,
} from "../agent-eval-database.js";

/** Runs `write` in its own transaction (so the failure aborts nothing else) and expects `pattern`. */
async function refused(sql: Sql, write: (tx: Sql) => Promise<unknown>, pattern: RegExp) {
  await expect(
    sql.begin(async (tx) => {
      // TransactionSql queries like Sql; the helpers only use the tagged template.
      await write(tx as unknown as Sql);
    }),
  ).rejects.toThrow(pattern);
}

describe.each(await testBackends())("the agent-eval schema on %s", (backend) => {
  let db: Awaited<ReturnType<typeof agentEvalDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await agentEvalDatabase(backend);
    sql = db.sql;
  });
  afterAll(() => db?.close());

  it("stores a submission with a bigint id read as a string, in state received", async () => {
    await inRolledBackTransaction(sql, async (tx) => {
      const id = await insertSubmission(tx, { hotkey: "5Miner" });
      expect(id).toMatch(/^\d+$/);
      const [row] =
        await tx`select hotkey, state, last_event_seq, via from submissions where id = ${id}`;
      expect(row).toEqual({
        hotkey: "5Miner",
        state: "received",
        last_event_seq: 0,
        via: "signed",
      });
    });
  });

  it("refuses a hash that is not the artifact's, a wrong size, a duplicate artifact, bad enums", async () => {
    const zip = Buffer.from("PK\x03\x04 one agent");
    const insert = (tx: Sql, over: Record<string, unknown>) => {
      const row = {
        hotkey: "5H",
        name: "n",
        filename: "a.zip",
        artifact: zip,
        artifact_sha256: sha256Hex(zip),
        size: zip.length,
        via: "signed",
        state: "received",
        ...over,
      };
      return tx`insert into submissions ${tx(row as never)}`;
    };
    await refused(
      sql,
      (tx) => insert(tx, { artifact_sha256: sha256Hex("other bytes") }),
      /check constraint/,
    );
    await refused(sql, (tx) => insert(tx, { size: zip.length + 1 }), /check constraint/);
    await refused(sql, (tx) => insert(tx, { state: "scored" }), /check constraint/);
    await refused(sql, (tx) => insert(tx, { via: "email" }), /check constraint/);
    await refused(sql, (tx) => insert(tx, { name: "" }), /check constraint/);
    const big = Buffer.alloc(1024 * 1024 + 1, 1);
    await refused(
      sql,
      (tx) => insert(tx, { artifact: big, artifact_sha256: sha256Hex(big), size: big.length }),
      /check constraint/,
    );
    await refused(
      sql,
      async (tx) => {
        await insert(tx, {});
        await insert(tx, { hotkey: "5Other" });
      },
      /duplicate key/,
    );
  });

  it("keeps a submission's artifact and identity immutable", async () => {
    const id = await insertSubmission(sql);
    await refused(
      sql,
      (tx) =>
        tx`update submissions set artifact = ${Buffer.from("PKx")}, artifact_sha256 = ${sha256Hex("PKx")}, size = 3 where id = ${id}`,
      /immutable column submissions.artifact/,
    );
    await refused(
      sql,
      (tx) => tx`update submissions set hotkey = '5Thief' where id = ${id}`,
      /immutable column submissions.hotkey/,
    );
    await sql`delete from submissions where id = ${id}`;
  });

  it("keeps status events unique per (submission, seq) and append-only", async () => {
    await inRolledBackTransaction(sql, async (tx) => {
      const id = await insertSubmission(tx);
      const event = (seq: number) => tx`
        insert into submission_status_events (submission_id, seq, machine, subject_id, event, to_state, actor)
        values (${id}, ${seq}, 'submission', ${id}, 'receive', 'received', 'miner')`;
      await event(1);
      await expect(
        tx.savepoint(
          (sp) => sp`
        insert into submission_status_events (submission_id, seq, machine, subject_id, event, to_state, actor)
        values (${id}, 1, 'submission', ${id}, 'receive', 'received', 'miner')`,
        ),
      ).rejects.toThrow(/duplicate key/);
      await expect(
        tx.savepoint(
          (sp) =>
            sp`update submission_status_events set to_state = 'completed' where submission_id = ${id}`,
        ),
      ).rejects.toThrow(/append-only/);
      await expect(
        tx.savepoint(
          (sp) => sp`
          insert into submission_status_events (submission_id, seq, machine, subject_id, event, to_state, actor)
          values (${id}, 2, 'submission', ${id}, 'receive', 'received', 'anyone')`,
        ),
      ).rejects.toThrow(/check constraint/);
    });
  });

  it("allows one active assignment per session, unique token hashes and nonces", async () => {
    await inRolledBackTransaction(sql, async (tx) => {
      const seeded = await seedAssignment(tx, "queued");
      const [existing] =
        await tx`select token_sha256, nonce from review_assignments where id = ${seeded.assignmentId}`;
      const second = (over: {
        state?: string;
        token?: string;
        nonce?: string;
        nonceState?: string;
      }) => {
        const id = newId("ra");
        return tx.savepoint(
          (sp) => sp`
          insert into review_assignments (id, session_id, submission_id, attempt, predecessor_id,
            core, core_sha256, state, token_sha256, nonce, nonce_state, expires_at)
          values (${id}, ${seeded.sessionId}, ${seeded.submissionId}, 2, ${seeded.assignmentId},
            '{}', ${sha256Hex(id)}, ${over.state ?? "queued"}, ${over.token ?? sha256Hex(`t:${id}`)},
            ${over.nonce ?? newId("nonce")}, ${over.nonceState ?? "active"}, now() + interval '30 minutes')`,
        );
      };
      await expect(second({})).rejects.toThrow(/review_assignments_one_active|duplicate key/);
      await expect(
        second({ state: "cancelled", nonceState: "revoked", token: existing!["token_sha256"] }),
      ).rejects.toThrow(/duplicate key/);
      await expect(
        second({ state: "cancelled", nonceState: "revoked", nonce: existing!["nonce"] }),
      ).rejects.toThrow(/duplicate key/);
      // The nonce follows the state: a cancelled assignment with a live nonce cannot exist.
      await expect(second({ state: "cancelled", nonceState: "active" })).rejects.toThrow(
        /check constraint/,
      );
    });
  });

  it("refuses an assignment TTL over 30 minutes and a session over 16 attempts", async () => {
    await inRolledBackTransaction(sql, async (tx) => {
      const seeded = await seedAssignment(tx, "queued");
      await expect(
        tx.savepoint(
          (sp) => sp`update review_sessions set attempts = 17 where id = ${seeded.sessionId}`,
        ),
      ).rejects.toThrow(/check constraint/);
      const id = newId("ra");
      const other = await insertSubmission(tx);
      await expect(
        tx.savepoint(async (sp) => {
          await sp`insert into review_sessions (id, submission_id, current_assignment_id, attempts)
                   values (${newId("rs")}, ${other}, ${id}, 1)`;
          await sp`insert into review_assignments (id, session_id, submission_id, attempt, core,
                     core_sha256, token_sha256, nonce, expires_at)
                   select ${id}, id, ${other}, 1, '{}', ${sha256Hex(id)}, ${sha256Hex(`t:${id}`)},
                     ${newId("nonce")}, now() + interval '31 minutes'
                   from review_sessions where submission_id = ${other}`;
        }),
      ).rejects.toThrow(/check constraint/);
    });
  });

  it("refuses a second write of every write-once assignment column, and changes to its core", async () => {
    await inRolledBackTransaction(sql, async (tx) => {
      const seeded = await seedAssignment(tx, "allowed");
      const a = seeded.assignmentId;
      // Savepoints one at a time: a transaction runs one statement at a time.
      const attempts = [
        () =>
          tx.savepoint(
            (sp) =>
              sp`update review_assignments set deployed = ${sp.json({ vm: "forged" })} where id = ${a}`,
          ),
        () =>
          tx.savepoint(
            (sp) =>
              sp`update review_assignments set model_call = ${sp.json({ url: "evil" })} where id = ${a}`,
          ),
        () =>
          tx.savepoint(
            (sp) =>
              sp`update review_assignments set report_envelope = ${sp.json({ v: 2 })} where id = ${a}`,
          ),
        () =>
          tx.savepoint(
            (sp) =>
              sp`update review_assignments set receipt_sha256 = ${sha256Hex("other")} where id = ${a}`,
          ),
        () =>
          tx.savepoint(
            (sp) =>
              sp`update review_assignments set verification = ${sp.json({ ok: true })} where id = ${a}`,
          ),
        () =>
          tx.savepoint(
            (sp) =>
              sp`update review_assignments set verification = null, verified_at = null where id = ${a}`,
          ),
      ];
      for (const attempt of attempts) await expect(attempt()).rejects.toThrow(/write-once column/);
      await expect(
        tx.savepoint(
          (sp) =>
            sp`update review_assignments set core = ${sp.json({ forged: 1 })} where id = ${a}`,
        ),
      ).rejects.toThrow(/immutable column review_assignments.core/);
      await expect(
        tx.savepoint(
          (sp) =>
            sp`update review_assignments set expires_at = expires_at + interval '1 minute' where id = ${a}`,
        ),
      ).rejects.toThrow(/immutable column/);
      // The token is delivered once.
      await tx`update review_assignments set token_delivered_at = now() where id = ${a}`;
      await expect(
        tx.savepoint(
          (sp) =>
            sp`update review_assignments set token_delivered_at = now() + interval '1 second' where id = ${a}`,
        ),
      ).rejects.toThrow(/write-once column review_assignments.token_delivered_at/);
    });
  });

  it("keeps an operator approval within 300 s and usable once", async () => {
    await inRolledBackTransaction(sql, async (tx) => {
      const seeded = await seedAssignment(tx, "rejected");
      const approval = (ttlSeconds: number) => {
        const id = newId("ap");
        return tx.savepoint(async (sp) => {
          await sp`insert into review_operator_approvals (id, session_id, predecessor_assignment_id,
                     approved_by, created_at, expires_at)
                   values (${id}, ${seeded.sessionId}, ${seeded.assignmentId}, 'validator-1', now(),
                     now() + make_interval(secs => ${ttlSeconds}))`;
          return id;
        });
      };
      await expect(approval(301)).rejects.toThrow(/check constraint/);
      const id = await approval(300);
      // A successor assignment spends it.
      const successor = newId("ra");
      await tx`
        insert into review_assignments (id, session_id, submission_id, attempt, predecessor_id, core,
          core_sha256, token_sha256, nonce, expires_at)
        values (${successor}, ${seeded.sessionId}, ${seeded.submissionId}, 2, ${seeded.assignmentId},
          '{}', ${sha256Hex(successor)}, ${sha256Hex(`t:${successor}`)}, ${newId("nonce")},
          now() + interval '30 minutes')`;
      await tx`update review_operator_approvals set used_at = now(), used_by_assignment_id = ${successor}
               where id = ${id}`;
      await expect(
        tx.savepoint(
          (sp) =>
            sp`update review_operator_approvals set used_at = now() + interval '1 second' where id = ${id}`,
        ),
      ).rejects.toThrow(/write-once column/);
      // An approval for an assignment of another session is refused.
      const foreign = await seedAssignment(tx, "rejected");
      await expect(
        tx.savepoint(
          (
            sp,
          ) => sp`insert into review_operator_approvals (id, session_id, predecessor_assignment_id,
                   approved_by, expires_at)
                 values (${newId("ap")}, ${seeded.sessionId}, ${foreign.assignmentId}, 'v', now() + interval '60 seconds')`,
        ),
      ).rejects.toThrow(/foreign key/);
    });
  });

  it("guards eval runs: one active per submission, score range, failure codes, write-once result", async () => {
    await inRolledBackTransaction(sql, async (tx) => {
      const seeded = await seedRun(tx, "verifying");
      const r = seeded.runId;
      await expect(
        tx.savepoint(
          (sp) => sp`update eval_runs set result_sha256 = ${sha256Hex("forged")} where id = ${r}`,
        ),
      ).rejects.toThrow(/write-once column eval_runs.result_sha256/);
      await expect(
        tx.savepoint(
          (sp) =>
            sp`update eval_runs set state = 'accepted', score = 1.5, accepted_at = now() where id = ${r}`,
        ),
      ).rejects.toThrow(/check constraint/);
      // Cancel after a result: refused by the table itself, not only by the code.
      await expect(
        tx.savepoint((sp) => sp`update eval_runs set state = 'cancelled' where id = ${r}`),
      ).rejects.toThrow(/check constraint/);
      await expect(
        tx.savepoint(
          (sp) => sp`update eval_runs set plan = ${sp.json({ tasks: [] })} where id = ${r}`,
        ),
      ).rejects.toThrow(/immutable column eval_runs.plan/);
      const second = newId("run");
      await expect(
        tx.savepoint(
          (sp) => sp`
          insert into eval_runs (id, submission_id, review_assignment_id, run_number, review_run_number,
            predecessor_id, plan, plan_sha256, token_sha256, nonce, expires_at)
          values (${second}, ${seeded.submissionId}, ${seeded.assignmentId}, 2, 2, ${r}, '{}',
            ${sha256Hex(second)}, ${sha256Hex(`t:${second}`)}, ${newId("nonce")}, now() + interval '1 hour')`,
        ),
      ).rejects.toThrow(/eval_runs_one_active|duplicate key/);
      const prepared = await seedRun(tx, "prepared");
      await expect(
        tx.savepoint(
          (sp) => sp`update eval_runs set state = 'error', failure_code = 'bored',
               failure = '{}', failed_at = now() where id = ${prepared.runId}`,
        ),
      ).rejects.toThrow(/check constraint/);
      await expect(
        tx.savepoint((sp) => sp`update eval_runs set score = 0.9 where id = ${prepared.runId}`),
      ).rejects.toThrow(/check constraint/);
    });
  });
});
