// The server of the `async-context` figure: node's HTTP server with an async handler shaped like
// a kit route's (a few awaited steps, a timer turn, a JSON answer), so each request makes the
// promises and async resources a real handler makes. BENCH_ASYNC_CONTEXT=1: one
// AsyncLocalStorage entered at start and each request run inside it, as the OpenTelemetry SDK's
// context manager does. Prints its URL, then serves until killed.
import { AsyncLocalStorage } from "node:async_hooks";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";

const storage = process.env.BENCH_ASYNC_CONTEXT === "1" ? new AsyncLocalStorage<number>() : null;
storage?.enterWith(0);
let served = 0;

async function step(value: number): Promise<number> {
  return value + 1;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let value = 0;
  for (let i = 0; i < 8; i++) value = await step(value);
  await nextTurn();
  const body = JSON.stringify({ path: req.url, value, context: storage?.getStore() ?? null });
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
}

const server = createServer((req, res) => {
  const answer = () => handle(req, res).catch(() => res.destroy());
  if (storage) storage.run(++served, answer);
  else answer();
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`http://127.0.0.1:${port}`);
});
