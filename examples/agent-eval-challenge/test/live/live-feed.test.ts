// The live feed on both backends: GET /v1/submissions/{id}/live streams a submission's public
// status changes and its task events in order (redacted, no scores), resumes after Last-Event-ID
// with no repeat and no gap, and ends once the submission reaches a final public status; 404
// for an unknown submission. Also the feed's source directly, with a short poll.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveFeed, parseFeedCursor } from "../../src/live/live-feed.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { postProgress, postResult, resultFor } from "../eval/eval-kit.js";
import { errorCode, ndjson, openAttemptOf, postEvents, runningRun } from "./live-kit.js";

interface FeedMessage {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** An open SSE connection read message by message. */
async function openFeed(t: AgentEvalTest, submissionId: number, lastEventId?: string) {
  const response = await t.fetch(`/v1/submissions/${submissionId}/live`, {
    headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ended = false;
  /** The next message, or null once the server ended the stream. */
  async function next(timeoutMs = 8_000): Promise<FeedMessage | null> {
    for (;;) {
      const cut = buffer.indexOf("\n\n");
      if (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const at = line.indexOf(": ");
          if (at > 0) fields[line.slice(0, at)] = line.slice(at + 2);
        }
        if (fields.data === undefined) continue;
        return {
          id: fields.id!,
          event: fields.event!,
          data: JSON.parse(fields.data) as Record<string, unknown>,
        };
      }
      if (ended) return null;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("no SSE message in time")), timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) ended = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  }
  /** Messages until `count` were read (the stream must stay open meanwhile). */
  async function take(count: number): Promise<FeedMessage[]> {
    const out: FeedMessage[] = [];
    while (out.length < count) {
      const message = await next();
      if (message === null) throw new Error(`the stream ended after ${out.length} messages`);
      out.push(message);
    }
    return out;
  }
  return { next, take, close: () => reader.cancel().catch(() => undefined) };
}

describe.each(await testBackends())("the live feed on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  it("answers 404 for an unknown submission and 422 for a malformed Last-Event-ID", async () => {
    const missing = await t.fetch("/v1/submissions/999999/live");
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("submission_not_found");
    const run = await runningRun(t);
    const bad = await t.fetch(`/v1/submissions/${run.submissionId}/live`, {
      headers: { "last-event-id": "1.2.3" },
    });
    expect(bad.status).toBe(422);
  });

  it("streams status changes and task events, resumes exactly, and ends on a final status", async () => {
    const run = await runningRun(t, { env: { API_TOKEN: "env-value-for-feed-42" } });
    const [taskA] = run.plan.task_set.task_ids as [string];
    const attempt = await openAttemptOf(t, run, { taskId: taskA });
    expect(
      (
        await postProgress(t, run, run.session, {
          type: "task.status",
          task_id: taskA,
          seq: 1,
          status: "running",
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await postEvents(
          t,
          attempt,
          ndjson([
            { message: "starting", stream: "stderr" },
            { message: "key env-value-for-feed-42 and Bearer abc.def.ghi" },
          ]),
        )
      ).status,
    ).toBe(202);

    const feed = await openFeed(t, run.submissionId);
    // The history: the submission's public statuses up to evaluating, then the task events.
    const history: FeedMessage[] = [];
    for (;;) {
      const message = (await feed.take(1))[0]!;
      history.push(message);
      if (message.event === "task.log" && message.data.message !== "starting") break;
    }
    const statuses = history.filter((message) => message.event === "status");
    expect(statuses.map((message) => message.data.status)).toEqual([
      "received",
      "reviewing",
      "reviewing",
      "reviewing",
      "approved",
      "evaluating",
    ]);
    expect(statuses.map((message) => message.data.seq)).toEqual(
      [...statuses.map((message) => message.data.seq as number)].sort((a, b) => a - b),
    );
    const tasks = history.filter((message) => message.event !== "status");
    expect(
      tasks.map((message) => [message.event, message.data.task_id, message.data.run_id]),
    ).toEqual([
      ["task.status", taskA, run.runId],
      ["task.log", taskA, run.runId],
      ["task.log", taskA, run.runId],
    ]);
    expect(tasks[1]!.data).toMatchObject({
      kind: "task.log",
      stream: "stderr",
      message: "starting",
    });
    const redacted = JSON.stringify(tasks[2]!.data);
    expect(redacted).not.toContain("env-value-for-feed-42");
    expect(redacted).not.toContain("abc.def.ghi");
    // Ids are compound cursors and increase.
    for (const message of history) expect(message.id).toMatch(/^\d+\.\d+$/);
    const lastSeen = history.at(-1)!.id;

    // Live: an event posted while connected arrives.
    expect((await postEvents(t, attempt, ndjson([{ message: "live one" }]))).status).toBe(202);
    const [live] = await feed.take(1);
    expect(live).toMatchObject({ event: "task.log", data: { message: "live one" } });
    await feed.close();

    // Resume after `lastSeen`: exactly what followed it (the live one, then newer), no repeat.
    expect((await postEvents(t, attempt, ndjson([{ message: "while away" }]))).status).toBe(202);
    const resumed = await openFeed(t, run.submissionId, lastSeen);
    const again = await resumed.take(2);
    expect(again.map((message) => message.data.message)).toEqual(["live one", "while away"]);
    expect(again[0]!.id).toBe(live!.id);
    await resumed.close();

    // The result makes the submission valid: the feed sends that status and ends.
    const fromLive = await openFeed(t, run.submissionId, again[1]!.id);
    expect((await postResult(t, run, await resultFor(run))).status).toBe(202);
    const final = await fromLive.take(1);
    expect(final[0]).toMatchObject({
      event: "status",
      data: { status: "valid", previous_status: "evaluating" },
    });
    expect(JSON.stringify(final)).not.toContain("score");
    expect(await fromLive.next()).toBeNull();

    // A feed opened on a final submission sends its history and ends at once.
    const closed = await openFeed(t, run.submissionId);
    const all: FeedMessage[] = [];
    for (let message = await closed.next(); message !== null; message = await closed.next()) {
      all.push(message);
    }
    expect(all.at(-1)).toMatchObject({ event: "status", data: { status: "valid" } });
    expect(new Set(all.map((message) => message.id)).size).toBe(all.length);
  });

  it("the source merges both streams by time and reads on in batches", async () => {
    const run = await runningRun(t);
    const attempt = await openAttemptOf(t, run);
    const lines = Array.from({ length: 7 }, (_, index) => ({ message: `line ${index}` }));
    expect((await postEvents(t, attempt, ndjson(lines))).status).toBe(202);
    const abort = new AbortController();
    const seen: string[] = [];
    const ids: string[] = [];
    // Batches of 2: every read is full until the end; the order still holds.
    for await (const event of liveFeed(t.sql, {
      submissionId: run.submissionId,
      cursor: parseFeedCursor(null),
      signal: abort.signal,
      options: { pollMs: 20, maxDurationMs: 60_000, batch: 2 },
    })) {
      ids.push(event.id!);
      const data = event.data as Record<string, unknown>;
      seen.push(event.event === "status" ? `status:${data.status}` : String(data.message));
      if (data.message === "line 6") abort.abort();
    }
    expect(seen.filter((item) => item.startsWith("line"))).toEqual(
      lines.map((line) => line.message),
    );
    expect(seen.slice(0, 6)).toEqual([
      "status:received",
      "status:reviewing",
      "status:reviewing",
      "status:reviewing",
      "status:approved",
      "status:evaluating",
    ]);
    // Both halves of the cursor never go back.
    const parsed = ids.map((id) => parseFeedCursor(id));
    for (let i = 1; i < parsed.length; i++) {
      expect(parsed[i]!.statusSeq).toBeGreaterThanOrEqual(parsed[i - 1]!.statusSeq);
      expect(parsed[i]!.eventId).toBeGreaterThanOrEqual(parsed[i - 1]!.eventId);
    }
  });
});
