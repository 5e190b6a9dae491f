// Closing a connection while the client is still sending its body resets it: bytes the server
// never read are still in its receive buffer, so the kernel answers with RST instead of FIN, and
// the reset can destroy the answer in the client's own buffer before the client reads it
// (RFC 9112 §9.6; on Node 26 a client writing a large upload saw EPIPE and never its 502: the
// master's passthrough-route test "drops an upload midway" fails without this).
// So a connection closed because a body was left unread closes as nginx's lingering_close does:
// the answer goes out with our FIN, then what the client still sends is read and thrown away
// until it closes its side, for LINGER_MS at most.
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/** The longest a closing connection keeps reading what the client still sends. */
export const LINGER_MS = 2_000;

const lingering = new WeakSet<Socket>();

/** Make the server's close after this request's answer a lingering one. */
export function lingerOnClose(req: IncomingMessage): void {
  const socket = req.socket;
  if (!socket || socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  // node's server calls destroySoon() once a `connection: close` answer is written: it would end
  // our side and destroy the socket as soon as the FIN is flushed, unread bytes or not.
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.destroyed) return;
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once("close", () => clearTimeout(timer));
    // The client closing its side after reading the answer ends the wait.
    this.once("end", () => this.destroy());
    this.end();
    // Discard the rest of the body: the request no longer has a reader, and a paused one would
    // stop the socket reading.
    req.removeAllListeners("data");
    req.resume();
    this.resume();
  };
}
