import { CliError } from "./_shared.js";

/** A JSON answer from the master. */
export interface MasterReply<T = unknown> {
  status: number;
  body: T;
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/**
 * Call the master and turn every failure into a sentence a user can act on: unreachable,
 * refused credentials, a conflict, a validation error with its fields.
 */
export async function callMaster<T>(
  baseUrl: string,
  path: string,
  init: RequestInit & { expect?: number[] } = {},
): Promise<MasterReply<T>> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      ...init,
      redirect: "manual",
      signal: init.signal ?? AbortSignal.timeout(60_000),
    });
  } catch (error) {
    throw new CliError(`cannot reach the master at ${baseUrl} (${describeNetworkError(error)})`);
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: keep the text for the message.
  }
  const expected = init.expect ?? [200, 201];
  if (!expected.includes(response.status)) throw new CliError(explain(response.status, body, path));
  return { status: response.status, body: body as T };
}

/** One sentence for a refused call: its status, the master's detail and code. */
export function explain(status: number, body: unknown, path: string): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  const code = (body as { code?: unknown } | null)?.code;
  if (status === 422 && Array.isArray(detail)) {
    const fields = detail.map(
      (issue: { loc?: unknown[]; msg?: string }) =>
        `${(issue.loc ?? []).slice(1).join(".") || "body"}: ${issue.msg}`,
    );
    return `the master refused the request (422): ${fields.join("; ")}`;
  }
  const reason =
    typeof detail === "string"
      ? detail
      : typeof body === "string" && body
        ? body.slice(0, 200)
        : "no detail";
  const prefix: Record<number, string> = {
    401: "the master refused the credentials (401)",
    403: "forbidden (403)",
    404: "not found (404)",
    409: "conflict (409)",
    413: "too large (413)",
    429: "rate limited (429)",
    502: "the challenge did not answer the master (502)",
  };
  return `${prefix[status] ?? `the master answered ${status} for ${path}`}: ${reason}${typeof code === "string" ? ` [${code}]` : ""}`;
}
