import { describe, expect, it } from "vitest";
import {
  bridgeRequestHeaders,
  isStrippedRequestHeader,
  passthroughRequestHeaders,
  upstreamResponseHeaders,
} from "./forward-headers.js";

const identity = { slug: "live", requestId: "req-1", remoteAddress: "10.0.0.7" };

describe("passthroughRequestHeaders", () => {
  const incoming = new Headers({
    host: "master.example",
    accept: "text/event-stream",
    "x-custom": "kept",
    "x-hotkey": "5Miner",
    "x-signature": "0xsig",
    "x-nonce": "nonce-0123456789abcdef",
    "x-timestamp": "1795262400",
    authorization: "Bearer stolen",
    "x-admin-token": "admin-secret",
    cookie: "session=1",
    "x-platform-challenge-slug": "evil",
    "x-platform-proxy": "false",
    "x-platform-verified-hotkey": "5Evil",
    "x-core-verified-hotkey": "5Evil",
    "x-core-verified-nonce": "n",
    "x-core-request-hash": "h",
    "x-core-challenge-slug": "evil",
    "x-verified-user": "root",
    "x-user-verified": "yes",
    forwarded: "for=1.2.3.4",
    "x-real-ip": "1.2.3.4",
    "x-forwarded-host": "evil.example",
    "x-forwarded-for": "203.0.113.9",
    "x-forwarded-proto": "https",
    "x-forwarded-prefix": "/evil",
    "x-request-id": "client-id",
    connection: "keep-alive, X-Secret-Hop",
    "x-secret-hop": "1",
    "keep-alive": "timeout=5",
    "proxy-authorization": "Basic eA==",
    "proxy-connection": "keep-alive",
    te: "trailers",
    trailer: "x-t",
    upgrade: "websocket",
    "transfer-encoding": "chunked",
    expect: "100-continue",
    "content-length": "12",
  });
  const out = passthroughRequestHeaders(incoming, identity, "12");

  it("keeps the client's own headers and the miner signature headers", () => {
    expect(out).toMatchObject({
      accept: "text/event-stream",
      "x-custom": "kept",
      "x-hotkey": "5Miner",
      "x-signature": "0xsig",
      "x-nonce": "nonce-0123456789abcdef",
      "x-timestamp": "1795262400",
      "content-length": "12",
    });
  });

  it("sets the platform headers itself, over anything the client sent", () => {
    expect(out).toMatchObject({
      "x-platform-proxy": "true",
      "x-platform-challenge-slug": "live",
      "x-forwarded-prefix": "/challenges/live",
      "x-forwarded-host": "master.example",
      "x-forwarded-for": "203.0.113.9, 10.0.0.7",
      "x-forwarded-proto": "https",
      "x-request-id": "req-1",
    });
  });

  it("passes the client's Authorization (a challenge's own bearer), unless it is a master credential", () => {
    expect(out.authorization).toBe("Bearer stolen");
    const held = passthroughRequestHeaders(
      incoming,
      identity,
      "12",
      (value) => value === "Bearer stolen",
    );
    expect(held.authorization).toBeUndefined();
  });

  it("drops the master's credentials, forged identity and hop-by-hop headers", () => {
    for (const name of [
      "x-admin-token",
      "cookie",
      "x-platform-verified-hotkey",
      "x-core-verified-hotkey",
      "x-core-verified-nonce",
      "x-core-request-hash",
      "x-core-challenge-slug",
      "x-verified-user",
      "x-user-verified",
      "forwarded",
      "x-real-ip",
      "connection",
      "x-secret-hop",
      "keep-alive",
      "proxy-authorization",
      "proxy-connection",
      "te",
      "trailer",
      "upgrade",
      "transfer-encoding",
      "expect",
      "host",
    ]) {
      expect(out, name).not.toHaveProperty(name);
    }
  });

  it("answers http for a forwarded proto it does not know, and no chain without addresses", () => {
    const bare = passthroughRequestHeaders(new Headers({ "x-forwarded-proto": "gopher" }), {
      slug: "s",
      requestId: "r",
    });
    expect(bare["x-forwarded-proto"]).toBe("http");
    expect(bare).not.toHaveProperty("x-forwarded-for");
    expect(bare).not.toHaveProperty("content-length");
  });

  it.each([
    "X-Platform-Anything",
    "X-CORE-VERIFIED-HOTKEY",
    "X-ADMIN-TOKEN",
    "Cookie",
    "Proxy-Foo",
    "x-api-verified",
    "X-Submission-Filename",
    "x_platform_verified_hotkey",
    "X_CORE_REQUEST_HASH",
    "x_forwarded_for",
    "x_admin_token",
    "x_submission_filename",
    "x_verified_user",
  ])("strips %s whatever its case or underscore spelling", (name) => {
    expect(isStrippedRequestHeader(name)).toBe(true);
  });

  it("leaves Authorization to the passthrough's master-credential check", () => {
    expect(isStrippedRequestHeader("Authorization")).toBe(false);
  });
});

describe("bridgeRequestHeaders", () => {
  it("sends the verified identity in both families and only content negotiation from the client", () => {
    const incoming = new Headers({
      "content-type": "application/zip",
      accept: "application/json",
      "x-hotkey": "5Miner",
      "x-signature": "0xsig",
      "x-platform-verified-hotkey": "5Evil",
      authorization: "Bearer forged",
      "x-custom": "dropped",
    });
    const out = bridgeRequestHeaders(incoming, identity, {
      token: "ct_token",
      hotkey: "5Verified",
      nonce: "nonce-0123456789abcdef",
      requestHash: "ab".repeat(32),
      filename: "agent.zip",
    });
    expect(out).toEqual({
      "content-type": "application/zip",
      accept: "application/json",
      authorization: "Bearer ct_token",
      "x-platform-proxy": "true",
      "x-platform-challenge-slug": "live",
      "x-core-challenge-slug": "live",
      "x-platform-verified-hotkey": "5Verified",
      "x-core-verified-hotkey": "5Verified",
      "x-core-verified-nonce": "nonce-0123456789abcdef",
      "x-core-request-hash": "ab".repeat(32),
      "x-submission-filename": "agent.zip",
      "x-forwarded-prefix": "/challenges/live",
      "x-forwarded-proto": "http",
      "x-forwarded-for": "10.0.0.7",
      "x-request-id": "req-1",
    });
  });
});

describe("upstreamResponseHeaders", () => {
  it("returns the challenge's headers less hop-by-hop ones and every Set-Cookie", () => {
    const out = upstreamResponseHeaders({
      "content-type": "text/plain",
      "x-custom": "yes",
      "set-cookie": ["a=1", "platform_admin=planted; Path=/admin"],
      "Set-Cookie2": "c=3",
      connection: "keep-alive, X-Hop",
      "x-hop": "1",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      "proxy-authenticate": "Basic",
      location: "http://127.0.0.1:9/elsewhere",
    });
    expect([...new Set(out.keys())].sort()).toEqual(["content-type", "location", "x-custom"]);
    expect(out.getSetCookie()).toEqual([]);
    expect(out.get("location")).toBe("http://127.0.0.1:9/elsewhere");
  });
});
