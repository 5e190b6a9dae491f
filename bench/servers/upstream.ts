// A minimal upstream for the proxy figures: answers a small JSON body, `GET /big` with 64 KiB,
// `POST /upload` with the number of bytes it read (the body is streamed in and dropped), and
// `GET /events`: a server-sent-events stream on which, every 100 ms while anyone listens, one
// event carries the wall-clock time (ms, fractional) it was written, to every subscriber at once.
// Prints its URL on stdout, then serves until killed.
import { createServer, type ServerResponse } from "node:http";

const subscribers = new Set<ServerResponse>();
setInterval(() => {
  if (subscribers.size === 0) return;
  const frame = `data: ${performance.timeOrigin + performance.now()}\n\n`;
  for (const subscriber of subscribers) subscriber.write(frame);
}, 100).unref();

const body = JSON.stringify({ ok: true, items: [1, 2, 3] });
const big = Buffer.alloc(64 * 1024, "x");
const server = createServer((req, res) => {
  if (req.method === "POST" && req.url?.startsWith("/upload")) {
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on("end", () => {
      const answer = JSON.stringify({ bytes });
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(answer),
      });
      res.end(answer);
    });
    return;
  }
  if (req.url?.startsWith("/events")) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    res.write(": connected\n\n");
    subscribers.add(res);
    req.on("close", () => subscribers.delete(res));
    return;
  }
  req.resume();
  const payload = req.url?.startsWith("/big") ? big : body;
  res.writeHead(200, {
    "content-type": payload === big ? "application/octet-stream" : "application/json",
    "content-length": Buffer.byteLength(payload),
  });
  res.end(payload);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`http://127.0.0.1:${address.port}`);
});
