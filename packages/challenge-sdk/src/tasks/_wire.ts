import { TaskRejectedError } from "./task-errors.js";

/**
 * A task is camelCase; the broker, its sandbox and core's `BrokerRunRequest` speak snake_case.
 * These tables are the whole translation: a task goes out through `toBrokerRunRequest`, and
 * whatever comes back naming a field (a refusal, a broker answer) comes in through
 * `inTaskTerms`, so an author only ever reads the names they wrote.
 */
const TOP: Record<string, string> = { jobId: "job_id", timeoutSeconds: "timeout_seconds" };
/** Weakening fields: renamed too, so `readOnly: false` is refused as a weakening, not a typo. */
const WEAKENING: Record<string, string> = {
  readOnly: "read_only",
  capAdd: "cap_add",
  hostMounts: "host_mounts",
};
const LIMITS: Record<string, string> = {
  memoryMb: "memory_mb",
  tmpfsMb: "tmpfs_mb",
  outputBytes: "output_bytes",
};
const FILE: Record<string, string> = { contentBase64: "content_base64" };

const ALL = { ...TOP, ...WEAKENING, ...LIMITS, ...FILE };
const TO_TASK = new Map(Object.entries(ALL).map(([camel, snake]) => [snake, camel]));
const WIRE_NAME = new RegExp(`\\b(${[...TO_TASK.keys()].join("|")})\\b`, "g");

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `value`'s keys renamed through `names`. The wire spelling of a `strict` name is refused: a
 * task written against the old snake_case API fails loudly instead of half-working. (A wire
 * spelling of a weakening field goes through, to be refused as the weakening it is.)
 */
function renamed(
  value: Record<string, unknown>,
  names: Record<string, string>,
  where: string,
  strict: Record<string, string> = names,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const camel = TO_TASK.get(key);
    if (camel !== undefined && strict[camel] !== undefined) {
      throw new TaskRejectedError(
        "invalid_task",
        `Invalid task: ${where}${key}: the task API is camelCase; write ${camel}`,
        { details: { field: `${where}${camel}` } },
      );
    }
    out[names[key] ?? key] = field;
  }
  return out;
}

/**
 * A task (checked only for being an object) as core's `BrokerRunRequest` would spell it.
 * Unknown keys are kept, so the schema refuses them; limits and files that are not objects
 * are kept as they are, for the same reason.
 */
export function toBrokerRunRequest(task: Record<string, unknown>): Record<string, unknown> {
  const request = renamed(task, { ...TOP, ...WEAKENING }, "", TOP);
  if (isRecord(request["limits"]))
    request["limits"] = renamed(request["limits"], LIMITS, "limits.");
  if (Array.isArray(request["files"])) {
    request["files"] = request["files"].map((file, index) =>
      isRecord(file) ? renamed(file, FILE, `files[${index}].`) : file,
    );
  }
  return request;
}

/** `text` (a message, a field path) with every wire field name written as the task API writes it. */
export function inTaskTerms(text: string): string {
  return text.replace(WIRE_NAME, (name) => TO_TASK.get(name) ?? name);
}
