// A local server speaking the OpenAI chat-completions wire protocol, strict about the request
// (as a real provider is about its own fields) and scripted per test for the answer.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as received, after validation. */
export interface ReceivedRequest {
  path: string;
  /** When it arrived (Date.now()). */
  at: number;
  authorization: string | undefined;
  body: ChatRequest;
}

/** The fields of a request this server checks. */
export interface ChatRequest {
  model: string;
  temperature: number;
  max_tokens: number;
  messages: { role: string; content: string }[];
  tools: {
    type: string;
    function: { name: string; description?: string; parameters: Record<string, unknown> };
  }[];
  tool_choice: { type: string; function: { name: string } };
}

/** How to answer one request. */
export type Reply =
  | { kind: "verdict"; arguments: string; finishReason?: string }
  | { kind: "content"; text: string }
  | {
      kind: "raw";
      status: number;
      body: string;
      contentType?: string;
      headers?: Record<string, string>;
    }
  | { kind: "hang" };

/** A running fake provider. */
export interface ChatServer {
  /** e.g. http://127.0.0.1:1234/v1 */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Every valid request, in order. */
  requests: ReceivedRequest[];
  /** Answers for the next requests, used in order; the last one repeats. */
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** A verdict's JSON arguments string (what a provider sends in tool_calls[].function.arguments). */
export function verdictArguments(verdict: Record<string, unknown>): string {
  return JSON.stringify(verdict);
}

export async function startChatServer(
  options: { apiKey?: string; model?: string } = {},
): Promise<ChatServer> {
  const apiKey = options.apiKey ?? "sk-test-key";
  const model = options.model ?? "reviewer-1";
  const requests: ReceivedRequest[] = [];
  let replies: Reply[] = [];
  let served = 0;
  const hanging = new Set<ServerResponse>();

  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const problem = invalid(req, body, apiKey, model);
    if (problem) {
      res.writeHead(problem.status, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ error: { message: problem.message, type: "invalid_request_error" } }),
      );
      return;
    }
    const request = JSON.parse(body) as ChatRequest;
    requests.push({
      path: req.url ?? "",
      at: Date.now(),
      authorization: req.headers.authorization,
      body: request,
    });
    const reply = replies[Math.min(served, replies.length - 1)] ?? {
      kind: "content",
      text: "no script",
    };
    served++;
    if (reply.kind === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    if (reply.kind === "raw") {
      res.writeHead(reply.status, {
        "content-type": reply.contentType ?? "application/json",
        ...reply.headers,
      });
      res.end(reply.body);
      return;
    }
    const message =
      reply.kind === "verdict"
        ? {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: `call_${served}`,
                type: "function",
                function: { name: request.tool_choice.function.name, arguments: reply.arguments },
              },
            ],
          }
        : { role: "assistant", content: reply.text };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${served}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            message,
            finish_reason: reply.kind === "verdict" ? (reply.finishReason ?? "tool_calls") : "stop",
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    model,
    requests,
    script(...next) {
      replies = next;
      served = 0;
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** What a strict provider would refuse in this request, or null. */
function invalid(
  req: IncomingMessage,
  text: string,
  apiKey: string,
  model: string,
): { status: number; message: string } | null {
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
    return { status: 404, message: `no route ${req.method} ${req.url}` };
  }
  if (req.headers.authorization !== `Bearer ${apiKey}`)
    return { status: 401, message: "Incorrect API key provided" };
  if (!String(req.headers["content-type"]).startsWith("application/json")) {
    return { status: 415, message: "content-type must be application/json" };
  }
  let body: Partial<ChatRequest>;
  try {
    body = JSON.parse(text) as Partial<ChatRequest>;
  } catch {
    return { status: 400, message: "body is not JSON" };
  }
  if (body.model !== model)
    return { status: 404, message: `model ${String(body.model)} does not exist` };
  if (body.temperature !== 0)
    return { status: 400, message: "this test server expects temperature 0" };
  if (typeof body.max_tokens !== "number" || body.max_tokens < 4096) {
    return { status: 400, message: "max_tokens must leave room for a long verdict (>= 4096)" };
  }
  const messages = body.messages;
  if (
    !Array.isArray(messages) ||
    messages.length < 2 ||
    messages[0]?.role !== "system" ||
    messages.some(
      (m) => typeof m?.content !== "string" || !["system", "user", "assistant"].includes(m.role),
    )
  ) {
    return {
      status: 400,
      message: "messages must start with a system message and hold string contents",
    };
  }
  const tools = body.tools;
  if (
    !Array.isArray(tools) ||
    tools.length === 0 ||
    tools.some(
      (tool) =>
        tool?.type !== "function" ||
        typeof tool.function?.name !== "string" ||
        typeof tool.function.parameters !== "object" ||
        (tool.function.parameters as { type?: unknown }).type !== "object",
    )
  ) {
    return {
      status: 400,
      message: "tools must be function tools with an object parameters schema",
    };
  }
  const forced = body.tool_choice;
  if (
    forced?.type !== "function" ||
    !tools.some((tool) => tool.function.name === forced.function?.name)
  ) {
    return { status: 400, message: "tool_choice must name one of the tools" };
  }
  return null;
}
