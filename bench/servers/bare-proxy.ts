// The floor of a Node.js proxy, for the `proxy` figure: node's HTTP server handing each request
// under /challenges/bench/ to the upstream given as argv[2] through undici's dispatch, with none
// of the master's work: no path rules, no registry lookup, no header policy beyond the hop
// headers HTTP/1.1 requires, no request id, no error contract. Whatever the master's proxy
// loses against this is its own; whatever this loses against nginx is Node's (its HTTP server,
// undici and the event loop on the same two cores). Prints its URL, then serves until killed.
import { createServer } from "node:http";
import { Pool } from "undici";

const PREFIX = "/challenges/bench";
const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "upgrade"]);
const pool = new Pool(process.argv[2]!);

const server = createServer((req, res) => {
  const headers: Record<string, string> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP.has(name)) headers[name] = raw[i + 1]!;
  }
  const bodyless = req.method === "GET" || req.method === "HEAD";
  pool.dispatch(
    {
      path: req.url!.slice(PREFIX.length) || "/",
      method: req.method as "GET",
      headers,
      body: bodyless ? null : req,
    },
    {
      onConnect() {},
      onHeaders(status, rawHeaders, resume) {
        const out: Record<string, string> = {};
        for (let i = 0; i < rawHeaders.length; i += 2) {
          const name = rawHeaders[i]!.toString("latin1").toLowerCase();
          if (!HOP.has(name)) out[name] = rawHeaders[i + 1]!.toString("latin1");
        }
        res.writeHead(status, out);
        res.on("drain", resume);
        return true;
      },
      onData(chunk) {
        return res.write(chunk);
      },
      onComplete() {
        res.end();
      },
      onError() {
        if (res.headersSent) res.destroy();
        else res.writeHead(502).end();
      },
    },
  );
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`http://127.0.0.1:${port}`);
});
