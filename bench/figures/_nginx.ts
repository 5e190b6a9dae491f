// nginx beside the master's proxy, for the proxy figures: Debian's nginx-light when installed
// (\`apt-get install nginx-light\`), one worker, upstream keep-alive, proxying
// /challenges/bench/ to the same upstream the master proxies.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnProcess, waitForPort } from "../_processes.js";

/** The first URL a bench server prints when it is ready. */
export const READY_URL = /(http:\/\/127\.0\.0\.1:\d+)/;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export function nginxBinary(): string | null {
  try {
    execFileSync("nginx", ["-v"], { stdio: "ignore" });
    return "nginx";
  } catch {
    return null;
  }
}

export async function startNginx(upstream: string) {
  const prefix = mkdtempSync(join(tmpdir(), "bench-nginx-"));
  const port = await freePort();
  const config = `
worker_processes 1;
error_log ${prefix}/error.log error;
pid ${prefix}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;
  upstream challenge { server ${upstream.replace("http://", "")}; keepalive 64; }
  # Uploads stream through as the master's proxy streams them (no buffering to disk first).
  client_max_body_size 2m; proxy_request_buffering off;
  server {
    listen 127.0.0.1:${port};
    location /challenges/bench/ {
      proxy_pass http://challenge/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Platform-Proxy true;
      proxy_set_header X-Platform-Challenge-Slug bench;
    }
  }
}`;
  writeFileSync(join(prefix, "nginx.conf"), config);
  const child = spawnProcess("nginx", [
    "-p",
    prefix,
    "-c",
    `${prefix}/nginx.conf`,
    "-g",
    "daemon off;",
  ]);
  await waitForPort(port);
  return { child, url: `http://127.0.0.1:${port}` };
}
