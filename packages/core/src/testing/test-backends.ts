import type { Backend } from "@platform/core";
import { connect } from "../db/_connect.js";
import { isCi } from "./is-ci.js";
import { testServerUrl } from "./test-database.js";

/** Overrides for `testBackends`: the server to probe and the environment (`CI`) to judge by. */
export interface TestBackendsOptions {
  url?: string;
  env?: Record<string, string | undefined>;
}

const answers = new Map<string, Promise<Backend[]>>();

/**
 * The backends a suite should run on: ["postgres", "pglite"] when the test server answers. When it
 * does not: under CI (any non-empty `CI` but "false" or "0", see `isCi`) this throws (CI must never silently skip the real server); elsewhere it
 * warns loudly, once, and returns ["pglite"]. The probe runs once per process.
 * @example describe.each(await testBackends())("store on %s", (backend) => { ... });
 */
export function testBackends(options: TestBackendsOptions = {}): Promise<Backend[]> {
  const env = options.env ?? process.env;
  const url = options.url ?? testServerUrl(env);
  const ci = isCi(env) ? `CI=${env["CI"]}` : null;
  const key = `${ci}|${url}`;
  let answer = answers.get(key);
  if (!answer) {
    answer = probe(url, ci);
    answers.set(key, answer);
  }
  return answer;
}

/** `ci` names the CI setting in force (e.g. "CI=1"), or is null outside CI. */
async function probe(url: string, ci: string | null): Promise<Backend[]> {
  try {
    const sql = await connect(url, { max: 1, connectTimeout: 3 });
    await sql.end({ timeout: 5 });
    return ["postgres", "pglite"];
  } catch (error) {
    const reason = (error as Error).message;
    if (ci) throw new Error(`${ci} but the PostgreSQL test server did not answer. ${reason}`);
    const bar = "!".repeat(78);
    console.warn(
      `\n${bar}\n!! PostgreSQL tests SKIPPED: only the embedded PGlite backend will run.\n!! ${reason}\n` +
        `!! Start a server or set TEST_DATABASE_URL; CI makes this an error.\n${bar}\n`,
    );
    return ["pglite"];
  }
}
