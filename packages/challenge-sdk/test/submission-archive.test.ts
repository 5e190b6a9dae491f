// router.submission with a declared archive: the SDK decodes, limits and reads the archive after
// the credential and the body's schema, before the rate limit and the handler (which gets
// ctx.archive), the same way in whether signed (base64 in JSON) or bridged (raw ZIP).
import { createHash } from "node:crypto";
import { defineChallenge, json, type SubmissionArchive, Type } from "@platform/challenge-sdk";
import {
  createMinerKey,
  startTestChallenge,
  type TestChallenge,
  writeZip,
} from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from "vitest";

/** The one archive object the route and (in a real challenge) its workers share. */
const AGENT_ARCHIVE: SubmissionArchive = {
  field: "zip_b64",
  maxBytes: 2048,
  noun: "agent ZIP",
  filename: /^[a-z]+\.zip$/,
  limits: { maxFiles: 4, maxUnpackedBytes: 4096, maxFileBytes: 1024 },
  codes: { archive_too_large: "agent_too_large", invalid_zip: "invalid_agent" },
};

const challenge = defineChallenge({
  slug: "archives",
  version: "1.0.0",
  migrations: [
    {
      version: 1,
      name: "agents",
      sql: "create table agents (id bigint generated always as identity primary key, hotkey text not null, sha256 text not null unique)",
    },
  ],
  routes: (router) => {
    router.submission({
      path: "/v1/agents",
      body: Type.Object({ zip_b64: Type.String() }, { additionalProperties: false }),
      raw: ["application/zip"],
      archive: AGENT_ARCHIVE,
      rateLimit: { limit: 1, windowSeconds: 3600 },
      handler: async (ctx) => {
        expectTypeOf(ctx.archive.sha256).toEqualTypeOf<string>();
        const { archive, miner, sql } = ctx;
        const [row] = await sql<{ id: string }[]>`
          insert into agents (hotkey, sha256) values (${miner.hotkey}, ${archive.sha256})
          returning id::text`;
        const id = row!.id;
        return json(
          { id, sha256: archive.sha256, files: archive.files.map((f) => f.path), via: miner.via },
          { status: 201 },
        );
      },
    });
  },
  weights: () => ({}),
});

const agent = (tag: string) => writeZip([{ name: "agent.py", data: `# ${tag}\n` }]);

describe("router.submission with an archive", () => {
  let t: TestChallenge<unknown>;
  beforeAll(async () => {
    t = await startTestChallenge(challenge);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.sql`delete from sdk_rate_limits`;
  });

  const submit = (body: unknown, miner = t.miner) =>
    t.signedFetch("/v1/agents", { method: "POST", json: body, miner });

  it("hands the handler the decoded bytes, their sha256 and the files, either way in", async () => {
    const zip = agent("a");
    const signed = await submit({ zip_b64: zip.toString("base64") });
    expect(signed.status, await signed.clone().text()).toBe(201);
    expect(await signed.json()).toMatchObject({
      sha256: createHash("sha256").update(zip).digest("hex"),
      files: ["agent.py"],
      via: "signed",
    });
    const uploader = await createMinerKey();
    const bridged = await t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: {
        "content-type": "application/zip",
        ...t.bridgeHeaders(uploader.hotkey, { filename: "agent.zip" }),
      },
      body: new Uint8Array(agent("b")),
    });
    expect(bridged.status, await bridged.clone().text()).toBe(201);
    expect(await bridged.json()).toMatchObject({ via: "bridge", files: ["agent.py"] });
  });

  it("refuses a bad archive with its status and the archive's code, and counts nothing", async () => {
    const miner = await createMinerKey();
    const cases: [unknown, number, string][] = [
      [{ zip_b64: "not base64!" }, 400, "invalid_base64"],
      [{ zip_b64: Buffer.from("no zip").toString("base64") }, 400, "invalid_agent"],
      [{ zip_b64: Buffer.alloc(2049).toString("base64") }, 413, "agent_too_large"],
      [{ zip_b64: "A".repeat(2800) }, 413, "agent_too_large"],
      [
        { zip_b64: writeZip([{ name: "a.py", data: "x".repeat(1025) }]).toString("base64") },
        413,
        "file_too_large",
      ],
      [
        { zip_b64: writeZip([{ name: "../a.py", data: "x" }]).toString("base64") },
        400,
        "invalid_path",
      ],
    ];
    for (const [body, status, code] of cases) {
      const response = await submit(body, miner);
      expect(response.status, code).toBe(status);
      expect(((await response.json()) as { code: string }).code).toBe(code);
    }
    // The schema still comes first: a body that is not the record is a 422.
    expect((await submit({ zip: "x" }, miner)).status).toBe(422);
    // None of the refusals took the miner's one slot.
    expect((await submit({ zip_b64: agent("c").toString("base64") }, miner)).status).toBe(201);
  });

  it("checks a bridged upload's file name against the archive's rule", async () => {
    const response = await t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: {
        "content-type": "application/zip",
        ...t.bridgeHeaders((await createMinerKey()).hotkey, { filename: "Agent-1.zip" }),
      },
      body: new Uint8Array(agent("d")),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe("invalid_filename");
  });

  it("documents the archive's refusals and a 422 on every route", () => {
    const paths = challenge.openapi().paths;
    const post = paths["/v1/agents"]!["post"] as { responses: Record<string, unknown> };
    expect(Object.keys(post.responses)).toEqual(
      expect.arrayContaining(["200", "400", "401", "413", "422", "429"]),
    );
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect(
          Object.keys((operation as { responses: object }).responses),
          `${method} ${path}`,
        ).toContain("422");
      }
    }
    const schemas = (challenge.openapi().components as { schemas: Record<string, unknown> })
      .schemas;
    expect(schemas).toHaveProperty("WeightsResponse");
  });
});
