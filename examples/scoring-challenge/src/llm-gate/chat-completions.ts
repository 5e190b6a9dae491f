/**
 * One forced tool call to an OpenAI-compatible chat-completions server: the request, the
 * timeout, one retry, and every way the answer can be unusable, each reported as a sentence.
 * Nothing here decides allow or deny; it only returns a validated verdict or says why not.
 */
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
  /** Pause before a retry (default 1 s). */
  retryDelayMs?: number;
  signal?: AbortSignal;
}

/** What came back: a verdict, or why there is none (`retryable` says whether asking again could help). */
export type ChatAnswer =
  | { ok: true; verdict: Verdict; attempts: number }
  | { ok: false; problem: string; attempts: number };

// A provider answer larger than this is not a verdict: stop reading.
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
// Statuses worth a second try; any other 4xx (bad key, bad request) will answer the same again.
const RETRYABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

interface Attempt {
  ok: boolean;
  verdict?: Verdict;
  problem?: string;
  retryable: boolean;
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
    if (attempt > 0) await sleep(options.retryDelayMs ?? 1000, options.signal);
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
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const url = `${provider.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.apiKey}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify(chatRequestBody(provider.model, messages, options.maxTokens)),
      signal,
      redirect: "error",
    });
    status = response.status;
    text = await readCapped(response);
  } catch (error) {
    if (timeout.aborted) {
      return {
        ok: false,
        problem: `the LLM provider did not answer within ${timeoutMs / 1000} s`,
        retryable: true,
      };
    }
    if (options.signal?.aborted)
      return { ok: false, problem: "the review was cancelled", retryable: false };
    return {
      ok: false,
      problem: `the LLM provider could not be reached: ${describe(error)}`,
      retryable: true,
    };
  }

  if (status < 200 || status >= 300) {
    return {
      ok: false,
      problem: `the LLM provider answered HTTP ${status}${providerMessage(text)}`,
      retryable: RETRYABLE_STATUS.has(status),
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

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel();
      throw new Error(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function providerMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return `: ${clip(message)}`;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text ? `: ${clip(text)}` : "";
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
