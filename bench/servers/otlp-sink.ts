// An OTLP/HTTP trace receiver for the bench: accepts every export (POST /v1/traces), counts the
// requests and bytes, and answers an empty success; nothing is decoded or kept. A master with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing here pays the whole cost of tracing (spans made, batched,
// serialised and sent) while the receiver's own work stays out of its process.
// Prints its URL on stdout, then serves until killed; GET /stats answers the counts.
import { createServer } from "node:http";

let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    const body = JSON.stringify({ requests, bytes });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
    return;
  }
  req.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
  });
  req.on("end", () => {
    requests++;
    res.writeHead(200, { "content-type": "application/x-protobuf", "content-length": "0" });
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`http://127.0.0.1:${address.port}`);
});
