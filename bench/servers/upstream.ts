// A minimal upstream for the proxy figure: answers every request with a small JSON body.
// Prints its URL on stdout, then serves until killed.
import { createServer } from "node:http";

const body = JSON.stringify({ ok: true, items: [1, 2, 3] });
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`http://127.0.0.1:${address.port}`);
});
