/**
 * One forced tool call to an OpenAI-compatible chat-completions server: the request, the
 * timeout, one retry, and every way the answer can be unusable, each reported as a sentence.
 * Nothing here decides allow or deny; it only returns a validated verdict or says why not.
 *
 * The request goes through the SDK's worker client, and which statuses are worth another try
 * and how long to wait (Retry-After, else a backoff) are the SDK's policy. The loop stays here,
 * not in `deliver`: every ask is a paid completion, so it is bounded by a count, and an answer
 * with an unreadable verdict is asked again too, which no status can say.
 */
import {
  backoffDelayMs,
  createWorkerClient,
  isRetryableStatus,
  WorkerClientError,
} from "@platform/challenge-sdk/client";
import { parseVerdict, VERDICT_TOOL_NAME, type Verdict, verdictTool } from "./verdict.js";

/** Where and how to ask. */
export interface ChatProvider {
  /** e.g. https://api.example.com/v1: requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  apiKey: string;
  model: string;
}

/** How patiently to ask. */
export interface ChatRequestOptions {
  /** Per attempt, the answer's body included (default 60 s). */
  timeoutMs?: number;
  /** Attempts after the first (default 1). */
  retries?: number;
  /** Completion tokens the verdict may use (default 8192: a cut verdict is a held bundle). */
  maxTokens?: number;
  /** Pause before a retry, with jitter (default 1 s); a provider's Retry-After wins. */
  retryDelayMs?: number;
  signal?: AbortSignal;
}

/** What came back: a verdict, or why there is none (`retryable` says whether asking again could help). */
export type ChatAnswer =
  | { ok: true; verdict: Verdict; attempts: number }
  | { ok: false; problem: string; attempts: number };

// A provider answer larger than this is not a verdict: stop reading.
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
// A provider that asks for a longer wait than this is not waited for: the bundle is held.
const MAX_RETRY_AFTER_MS = 30_000;

interface Attempt {
  ok: boolean;
  verdict?: Verdict;
  problem?: string;
  retryable: boolean;
  /** The wait the provider's Retry-After asked for. */
  retryAfterMs?: number | null;
}

/** Ask `provider` for a verdict on `system` + `user`, forcing the verdict tool call. */
export async function requestVerdict(
  provider: ChatProvider,
  messages: { system: string; user: string },
  options: ChatRequestOptions = {},
): Promise<ChatAnswer> {
  const retries = options.retries ?? 1;
  let last: Attempt = { ok: false, problem: "no attempt made", retryable: false };
  let attempts = 0;
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (attempt > 0) {
      const waitMs =
        last.retryAfterMs ??
        backoffDelayMs(attempt, { initialDelayMs: options.retryDelayMs ?? 1000 });
      if (waitMs > MAX_RETRY_AFTER_MS) break;
      await sleep(waitMs, options.signal);
    }
    if (options.signal?.aborted) break;
    attempts++;
    last = await attemptOnce(provider, messages, options);
    if (last.ok && last.verdict) return { ok: true, verdict: last.verdict, attempts };
    if (!last.retryable) break;
  }
  return { ok: false, problem: last.problem ?? "unknown provider failure", attempts };
}

/** The request body: temperature 0, the verdict tool forced, room for a long verdict. */
export function chatRequestBody(
  model: string,
  messages: { system: string; user: string },
  maxTokens = 8192,
): Record<string, unknown> {
  return {
    model,
    temperature: 0,
    max_tokens: maxTokens,
    messages: [
      { role: "system", content: messages.system },
      { role: "user", content: messages.user },
    ],
    tools: [verdictTool()],
    tool_choice: { type: "function", function: { name: VERDICT_TOOL_NAME } },
  };
}

async function attemptOnce(
  provider: ChatProvider,
  messages: { system: string; user: string },
  options: ChatRequestOptions,
): Promise<Attempt> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const client = createWorkerClient({
    baseUrl: provider.baseUrl,
    auth: { bearer: provider.apiKey },
    timeoutMs,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
  let answer: Awaited<ReturnType<typeof client.send>>;
  try {
    answer = await client.send("POST", "/chat/completions", {
      json: chatRequestBody(provider.model, messages, options.maxTokens),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (!(error instanceof WorkerClientError)) throw error;
    if (error.kind === "timeout") {
      return {
        ok: false,
        problem: `the LLM provider did not answer within ${timeoutMs / 1000} s`,
        retryable: true,
      };
    }
    if (error.kind === "aborted") {
      return { ok: false, problem: "the review was cancelled", retryable: false };
    }
    const why = error.kind === "too_large" ? error.message : describe(error.cause ?? error);
    return {
      ok: false,
      problem: `the LLM provider could not be reached: ${why}`,
      retryable: true,
    };
  }

  const text = answer.bytes.toString("utf8");
  if (!answer.ok) {
    return {
      ok: false,
      problem: `the LLM provider answered HTTP ${answer.status}${answer.detail ? `: ${clip(answer.detail)}` : ""}`,
      retryable: isRetryableStatus(answer.status),
      retryAfterMs: answer.retryAfterMs,
    };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {
      ok: false,
      problem: `the LLM provider's answer is not JSON: ${clip(text)}`,
      retryable: true,
    };
  }
  return verdictFromCompletion(body);
}

/** The verdict in a chat-completions answer, or what is wrong with the answer. */
export function verdictFromCompletion(body: unknown): Attempt {
  const choice = (body as { choices?: unknown[] } | null)?.choices?.[0] as
    | { message?: { tool_calls?: unknown[] }; finish_reason?: string }
    | undefined;
  if (!choice || typeof choice !== "object") {
    return { ok: false, problem: "the LLM provider's answer has no choices", retryable: true };
  }
  const call = choice.message?.tool_calls?.[0] as
    | { function?: { name?: string; arguments?: unknown } }
    | undefined;
  if (!call?.function) {
    return {
      ok: false,
      problem: `the reviewer did not call ${VERDICT_TOOL_NAME}${choice.finish_reason ? ` (finish_reason ${choice.finish_reason})` : ""}`,
      retryable: true,
    };
  }
  if (call.function.name !== VERDICT_TOOL_NAME) {
    return {
      ok: false,
      problem: `the reviewer called ${JSON.stringify(call.function.name)} instead of ${VERDICT_TOOL_NAME}`,
      retryable: true,
    };
  }
  const raw = call.function.arguments;
  let args: unknown = raw;
  if (typeof raw === "string") {
    try {
      args = JSON.parse(raw);
    } catch {
      const cut =
        choice.finish_reason === "length" ? " (cut short at the completion token limit)" : "";
      return {
        ok: false,
        problem: `the verdict is not valid JSON${cut}: ${clip(raw)}`,
        retryable: true,
      };
    }
  }
  const parsed = parseVerdict(args);
  if (!parsed.ok) {
    return {
      ok: false,
      problem: `the verdict is malformed: ${parsed.problems.join("; ")}`,
      retryable: true,
    };
  }
  return { ok: true, verdict: parsed.verdict, retryable: false };
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

function clip(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
