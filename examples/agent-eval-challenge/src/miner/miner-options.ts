/**
 * The miner tool's command line: one command per step of the flow, `run` for all of them, and
 * options checked up front with messages that say what to do. No dependency: node:util's
 * parseArgs.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DEFAULT_AGENT_IMAGE } from "../eval-worker/eval-worker-settings.js";
import { MinerError } from "./challenge-client.js";

export const COMMANDS = ["run", "submit", "env", "launch", "review", "eval", "status"] as const;
export type Command = (typeof COMMANDS)[number];

export const USAGE = `usage: node dist/miner.js <command> [options]

Takes an agent from upload to a score on the agent-eval challenge, step by step or at once.

commands:
  run      --agent <dir|zip>   the whole flow: submit, env, launch, review, eval, the score
  submit   --agent <dir|zip>   upload the agent (prints its submission id)
  env      --submission <id>   set the agent's env (--env/--env-file), or confirm none
  launch   --submission <id>   give the go-ahead (locks the env)
  review   --submission <id>   prepare the review, run the reference review worker, the verdict
  eval     --submission <id>   prepare the run, sign its telemetry grant, run the eval worker
  status   --submission <id>   the submission's eval runs and scores

options:
  --url <url>           the challenge, or a master (default PLATFORM_MASTER_URL, else
                        http://127.0.0.1:8080: the master \`npm start\` runs)
  --key-file <file>     a file holding the hotkey's mnemonic (else PLATFORM_MNEMONIC)
  --new-key             a fresh throwaway hotkey for this run (its address is printed)
  --name <name>         the submission's display name (default: the agent folder's name)
  --env KEY=VALUE       an env value for the agent (repeatable); values are never printed
  --env-file <file>     KEY=VALUE lines (# comments)
  --agent-image <tag>   the image agents run in (default ${DEFAULT_AGENT_IMAGE}, built when absent)
  --wait-weight <s>     through a master, wait this long for the weight (default 120)
  -h, --help            this text

The last line of \`run\` is always \`final score: <0..1>\`; it exits 0 whatever the score, and 1
when the flow could not complete.`;

export type MinerOptions = NonNullable<ReturnType<typeof parseMinerOptions>>;

function envEntry(text: string, where: string, into: Record<string, string>) {
  const equals = text.indexOf("=");
  if (equals < 1) throw new MinerError(`${where}: expected KEY=VALUE`);
  into[text.slice(0, equals).trim()] = text.slice(equals + 1);
}

/** The options of `argv` (without node and the script), or null for --help. */
export function parseMinerOptions(argv: string[], env: NodeJS.ProcessEnv) {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new MinerError(`${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return null;
  const command = positionals[0] as Command;
  if (!COMMANDS.includes(command)) {
    throw new MinerError(`unknown command ${JSON.stringify(positionals[0])}\n\n${USAGE}`);
  }
  const needsAgent = command === "run" || command === "submit";
  if (needsAgent && !values.agent) throw new MinerError(`${command} needs --agent <dir|zip>`);
  let submission: number | undefined;
  if (!needsAgent) {
    submission = Number(values.submission);
    if (!Number.isSafeInteger(submission) || submission < 1) {
      throw new MinerError(`${command} needs --submission <id> (a positive integer)`);
    }
  }
  const envValues: Record<string, string> = {};
  if (values["env-file"]) {
    const lines = readFileSync(values["env-file"], "utf8").split(/\r?\n/);
    lines.forEach((line, index) => {
      if (line.trim() === "" || line.trimStart().startsWith("#")) return;
      envEntry(line, `${values["env-file"]}:${index + 1}`, envValues);
    });
  }
  for (const entry of values.env ?? []) envEntry(entry, "--env", envValues);
  const wait = Number(values["wait-weight"] ?? "120");
  if (!Number.isFinite(wait) || wait < 0)
    throw new MinerError("--wait-weight must be seconds >= 0");
  return {
    command,
    url: values.url ?? env.PLATFORM_MASTER_URL ?? "http://127.0.0.1:8080",
    keyFile: values["key-file"],
    newKey: values["new-key"] ?? false,
    agent: values.agent,
    name: values.name,
    submission,
    env: envValues,
    agentImage: values["agent-image"] ?? DEFAULT_AGENT_IMAGE,
    waitWeightSeconds: wait,
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      "key-file": { type: "string" },
      "new-key": { type: "boolean" },
      agent: { type: "string" },
      name: { type: "string" },
      submission: { type: "string" },
      env: { type: "string", multiple: true },
      "env-file": { type: "string" },
      "agent-image": { type: "string" },
      "wait-weight": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
