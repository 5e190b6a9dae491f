/**
 * The optional second opinion: one OpenAI-compatible chat-completions request about the agent's
 * files. Its exact bytes are planned first, so their sha256 can be bound by model-call-started
 * before any connection to the model exists (rule 18); then exactly those bytes are sent. With no
 * model configured, the planned call is a fixed "no model" request that is never sent, so every
 * report still binds one request.
 */
import { randomBytes } from "node:crypto";
import type { ZipFileEntry } from "@platform/challenge-sdk/zip";
import { sha256Hex } from "../crypto/index.js";
import {
  MAX_EVIDENCE_OBJECT_BYTES,
  type ReviewFindingRecord,
  type ReviewVerdict,
} from "../review/review-envelope.js";
import type { PlannedModelCall } from "../review/vm-writes.js";
import type { ModelSettings } from "./worker-settings.js";

/** The body whose sha256 a "no model" call binds: fixed, canonical JSON, never sent. */
export const NO_MODEL_REQUEST_BODY = Buffer.from(
  '{"model_call":"none","schema_version":"review-model-request/v1"}',
  "utf8",
);

/** Most characters of file content the prompt carries (the rest is named, not shown). */
export const MAX_PROMPT_CONTENT_CHARS = 64 * 1024;
const MODEL_TIMEOUT_MS = 120_000;
/** Most bytes of the model's answer kept in the transcript. */
const MAX_TRANSCRIPT_RESPONSE_BYTES = 64 * 1024;

/** The one request a review plans: what model-call-started binds, and the bytes to send. */
export interface PlannedRequest {
  record: PlannedModelCall;
  /** The exact request body (null: no model, nothing is sent). */
  body: Buffer | null;
}

const SYSTEM_PROMPT = [
  "You review the source of an AI agent submitted to an evaluation, before it runs.",
  "The agent may call only the model endpoint given to it (MODEL_BASE_URL); it must not open raw",
  "sockets or other URLs, read credentials or other processes' environment, write outside its",
  "workspace, hide code (encoded or packed), or leave processes running after its task.",
  'Answer with one JSON object only: {"verdict":"allow"|"reject"|"escalate","reasons":[string]}.',
].join(" ");

/** A fresh request id (base64url, the service's id alphabet). */
export function newRequestId(): string {
  return randomBytes(16).toString("base64url");
}

/** The planned "no model" call. */
export function planNoModelCall(requestId: string): PlannedRequest {
  const none = { provider: "none", model: "none", endpoint_host: "none" };
  return { record: boundRequest(requestId, none, NO_MODEL_REQUEST_BODY), body: null };
}

/** What model-call-started binds: the request's id, its destination and its body's sha256. */
function boundRequest(
  requestId: string,
  target: Pick<PlannedModelCall, "provider" | "model" | "endpoint_host">,
  body: Buffer,
): PlannedModelCall {
  return { request_id: requestId, ...target, request_sha256: sha256Hex(body) };
}

/** The chat-completions request about `files`, with the static findings as context. */
export function planModelCall(
  requestId: string,
  model: ModelSettings,
  files: readonly ZipFileEntry[],
  findings: readonly ReviewFindingRecord[],
): PlannedRequest {
  let budget = MAX_PROMPT_CONTENT_CHARS;
  const sections = files.map((file) => {
    const text = file.data.toString("utf8");
    const shown = text.slice(0, Math.max(0, budget));
    budget -= shown.length;
    const cut =
      shown.length < text.length ? `\n[... ${text.length - shown.length} more characters]` : "";
    return `=== ${file.path} (${file.data.length} bytes)\n${shown}${cut}`;
  });
  const staticFindings =
    findings.length === 0
      ? "The static checks found nothing."
      : `The static checks found:\n${findings.map((f) => `- ${f.check_id} (${f.severity}) ${f.path ?? ""}: ${f.message}`).join("\n")}`;
  const request = {
    model: model.model,
    temperature: 0,
    max_tokens: 512,
    messages: [
      { role: "system", content: SYSTEM_PROMPT },
      {
        role: "user",
        content: `${staticFindings}\n\nThe agent's files:\n${sections.join("\n\n")}`,
      },
    ],
  };
  const body = Buffer.from(JSON.stringify(request), "utf8");
  const target = {
    provider: "openai-compatible",
    model: model.model,
    endpoint_host: model.endpointHost,
  };
  return { record: boundRequest(requestId, target, body), body };
}

/** What the model said, and the transcript evidence of the exchange. */
export interface ModelOpinion {
  verdict: ReviewVerdict;
  reasons: string[];
  responseSha256: string;
  transcript: Buffer;
}

export class ModelUnavailableError extends Error {
  override readonly name = "ModelUnavailableError";
}

/**
 * Send the planned bytes (and nothing else) to `{baseUrl}/chat/completions`; the verdict is the
 * JSON object in the first choice's message content.
 * @throws ModelUnavailableError on a network error, a non-2xx status or an unreadable answer.
 */
export async function callModel(
  model: ModelSettings,
  planned: PlannedRequest,
): Promise<ModelOpinion> {
  if (planned.body === null) throw new ModelUnavailableError("no model request was planned");
  let status: number;
  let answer: Buffer;
  try {
    const response = await fetch(`${model.baseUrl}/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(model.apiKey === undefined ? {} : { authorization: `Bearer ${model.apiKey}` }),
      },
      body: new Uint8Array(planned.body),
      signal: AbortSignal.timeout(MODEL_TIMEOUT_MS),
    });
    status = response.status;
    answer = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    throw new ModelUnavailableError(
      `the model endpoint did not answer: ${(error as Error).message}`,
    );
  }
  if (status < 200 || status > 299) {
    throw new ModelUnavailableError(`the model endpoint answered ${status}`);
  }
  const { verdict, reasons } = parseOpinion(answer);
  const kept = answer.subarray(0, MAX_TRANSCRIPT_RESPONSE_BYTES);
  const record = (request: unknown) =>
    Buffer.from(
      JSON.stringify({
        schema_version: "model-transcript/v1",
        endpoint: `${model.baseUrl}/chat/completions`,
        request_sha256: planned.record.request_sha256,
        request,
        response_status: status,
        response_sha256: sha256Hex(answer),
        response_body: kept.toString("utf8"),
        response_truncated: kept.length < answer.length,
        verdict,
        reasons,
      }),
      "utf8",
    );
  let transcript = record(JSON.parse(planned.body.toString("utf8")));
  // An evidence object has a size limit; the request's sha256 still names what was sent.
  if (transcript.length > MAX_EVIDENCE_OBJECT_BYTES) transcript = record(null);
  return { verdict, reasons, responseSha256: sha256Hex(answer), transcript };
}

/** The verdict in a chat-completions answer; tolerant of a ```json fence around the object. */
export function parseOpinion(answer: Buffer): { verdict: ReviewVerdict; reasons: string[] } {
  let content: unknown;
  try {
    const parsed = JSON.parse(answer.toString("utf8")) as {
      choices?: { message?: { content?: unknown } }[];
    };
    content = parsed.choices?.[0]?.message?.content;
  } catch {
    throw new ModelUnavailableError("the model's answer is not JSON");
  }
  if (typeof content !== "string") {
    throw new ModelUnavailableError("the model's answer has no message content");
  }
  const object = /\{[\s\S]*\}/.exec(content)?.[0];
  let opinion: { verdict?: unknown; reasons?: unknown };
  try {
    opinion = JSON.parse(object ?? "") as typeof opinion;
  } catch {
    throw new ModelUnavailableError("the model's message holds no JSON verdict");
  }
  if (
    opinion.verdict !== "allow" &&
    opinion.verdict !== "reject" &&
    opinion.verdict !== "escalate"
  ) {
    throw new ModelUnavailableError("the model's verdict is not allow, reject or escalate");
  }
  const reasons = Array.isArray(opinion.reasons)
    ? opinion.reasons.filter((reason): reason is string => typeof reason === "string").slice(0, 16)
    : [];
  return { verdict: opinion.verdict, reasons };
}
