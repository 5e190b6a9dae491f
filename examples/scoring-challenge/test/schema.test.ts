// The migration's guarantees, checked against both databases: what the tables refuse matters as
// much as what they store.
import type { Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { insertSubmission, scoringDatabase } from "./scoring-database.js";

describe.each(await testBackends())("the scoring schema on %s", (backend) => {
  let db: Awaited<ReturnType<typeof scoringDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await scoringDatabase(backend);
    sql = db.sql;
  });
  afterAll(() => db?.close());
  beforeEach(async () => {
    await sql`delete from submissions`;
    await sql`delete from llm_verdicts`;
  });

  it("stores a submission with its bundle, defaults and a bigint id read as a string", async () => {
    const id = await insertSubmission(sql, { hotkey: "5Miner" });
    expect(id).toMatch(/^\d+$/);
    const [row] = await sql`select * from submissions where id = ${id}`;
    expect(row).toMatchObject({
      hotkey: "5Miner",
      status: "pending",
      llm_gate: "required",
      metadata: {},
      bundle: Buffer.from("PK"),
      final_score: null,
      q_arch: null,
      held_at: null,
    });
  });

  it("refuses an unknown status, a bad code hash, non-object metadata, held without held_at", async () => {
    const bad = [
      sql`insert into submissions (hotkey, epoch_id, status, via, filename, code_hash, bundle)
          values ('k', 1, 'scored', 'signed', 'b.zip', ${"0".repeat(64)}, ${Buffer.from("x")})`,
      sql`insert into submissions (hotkey, epoch_id, via, filename, code_hash, bundle)
          values ('k', 1, 'signed', 'b.zip', 'ABC', ${Buffer.from("x")})`,
      sql`insert into submissions (hotkey, epoch_id, via, filename, code_hash, bundle, metadata)
          values ('k', 1, 'signed', 'b.zip', ${"0".repeat(64)}, ${Buffer.from("x")}, '[1]'::jsonb)`,
      sql`insert into submissions (hotkey, epoch_id, status, via, filename, code_hash, bundle)
          values ('k', 1, 'held', 'signed', 'b.zip', ${"0".repeat(64)}, ${Buffer.from("x")})`,
      sql`insert into submissions (hotkey, epoch_id, via, filename, code_hash, bundle, llm_gate)
          values ('k', 1, 'signed', 'b.zip', ${"0".repeat(64)}, ${Buffer.from("x")}, 'maybe')`,
    ];
    for (const query of bad) await expect(query).rejects.toThrow(/violates check constraint/);
  });

  it("moves updated_at on every update", async () => {
    const id = await insertSubmission(sql);
    const [before] = await sql<
      { updated_at: Date }[]
    >`select updated_at from submissions where id = ${id}`;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await sql`update submissions set status = 'running' where id = ${id}`;
    const [after] = await sql<
      { updated_at: Date }[]
    >`select updated_at from submissions where id = ${id}`;
    expect(after!.updated_at.getTime()).toBeGreaterThan(before!.updated_at.getTime());
  });

  it("grants a GPU to one active lease at a time, and a submission one live lease", async () => {
    const a = await insertSubmission(sql);
    const b = await insertSubmission(sql);
    await sql`insert into gpu_leases (submission_id, gpu_index, status, activated_at) values (${a}, 0, 'active', now())`;
    await expect(
      sql`insert into gpu_leases (submission_id, gpu_index, status, activated_at) values (${b}, 0, 'active', now())`,
    ).rejects.toThrow(/duplicate key/);
    await expect(sql`insert into gpu_leases (submission_id) values (${a})`).rejects.toThrow(
      /duplicate key/,
    );
    await expect(
      sql`insert into gpu_leases (submission_id, status) values (${b}, 'active')`,
    ).rejects.toThrow(/violates check constraint/);
    await sql`update gpu_leases set status = 'released', released_at = now() where submission_id = ${a}`;
    await sql`insert into gpu_leases (submission_id, gpu_index, status, activated_at) values (${b}, 0, 'active', now())`;
    const summary =
      await sql`select status, tier, count(*)::int as n from gpu_leases group by 1, 2 order by 1`;
    expect(summary).toEqual([
      { status: "active", tier: "default", n: 1 },
      { status: "released", tier: "default", n: 1 },
    ]);
  });

  it("keeps one eval-job row per submission and level, gone with its submission", async () => {
    const id = await insertSubmission(sql);
    await sql`insert into eval_jobs (submission_id, level) values (${id}, 'run')`;
    await expect(
      sql`insert into eval_jobs (submission_id, level) values (${id}, 'run')`,
    ).rejects.toThrow(/duplicate key/);
    await expect(
      sql`insert into eval_jobs (submission_id, level, status) values (${id}, 'llm', 'exploded')`,
    ).rejects.toThrow(/violates check constraint/);
    await sql`delete from submissions where id = ${id}`;
    expect((await sql`select 1 from eval_jobs`).length).toBe(0);
  });

  it("caches only decisions in llm_verdicts", async () => {
    await expect(
      sql`insert into llm_verdicts (code_hash, rules_revision, outcome, verdict, model)
          values (${"a".repeat(64)}, 'r1', 'held', '{}'::jsonb, 'm')`,
    ).rejects.toThrow(/violates check constraint/);
  });

  it("serves the leaderboard query from its index shape", async () => {
    const ids = [];
    for (const [hotkey, score] of [
      ["5A", 0.1],
      ["5A", 0.2],
      ["5B", 0.2],
    ] as const) {
      const id = await insertSubmission(sql, { hotkey, status: "completed", epochId: 7 });
      await sql`update submissions set final_score = ${score} where id = ${id}`;
      ids.push(id);
    }
    const best = await sql`
      select distinct on (hotkey) hotkey, id::text as id, final_score from submissions
      where epoch_id = 7 and status = 'completed'
      order by hotkey, final_score desc, created_at, id`;
    expect(best).toEqual([
      { hotkey: "5A", id: ids[1], final_score: 0.2 },
      { hotkey: "5B", id: ids[2], final_score: 0.2 },
    ]);
  });
});
