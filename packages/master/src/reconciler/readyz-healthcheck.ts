import { ignoreMissing, PLATFORM_LABELS } from "@platform/challenge-sdk/sandbox";
import type Docker from "dockerode";
import { isEngineUnreachable } from "./engine-view.js";

const SECOND_NS = 1_000_000_000;
const NODE_PATHS = ["/usr/local/bin/node", "/usr/bin/node"];
const WGET_PATHS = ["/bin/wget", "/usr/bin/wget"];

/**
 * The readiness check Swarm runs in a challenge's task, as the master's probe asks it
 * (readiness-probe.ts): `GET /readyz` 2xx is ready, 404 or 405 (not an SDK service) falls back
 * to `GET /health`. A task becomes "running" only once it passes, so a rolling update keeps the
 * old task until the new one is ready. Written in what the image has: node (every SDK
 * challenge), else busybox or GNU wget with a shell; an image with neither keeps its own
 * HEALTHCHECK, if any, or goes without (Swarm then calls a task ready once it starts).
 */
export class ReadyzHealthchecks {
  private readonly known = new Map<string, Docker.HealthConfig | undefined>();

  constructor(private readonly docker: Docker) {}

  /** The check for `image` (pinned: the answer is kept per image) listening on `port`. */
  async forImage(
    image: string,
    port: number,
    startSeconds: number,
  ): Promise<Docker.HealthConfig | undefined> {
    const key = `${image}\0${port}\0${startSeconds}`;
    if (!this.known.has(key)) this.known.set(key, await this.build(image, port, startSeconds));
    return this.known.get(key);
  }

  private async build(image: string, port: number, startSeconds: number) {
    let found: Set<string>;
    try {
      found = await this.programs(image, [...NODE_PATHS, ...WGET_PATHS, "/bin/sh"]);
    } catch (error) {
      // An image Docker will not make a container of here still deploys: with its own check.
      if (isEngineUnreachable(error)) throw error;
      return undefined;
    }
    const node = NODE_PATHS.find((path) => found.has(path));
    const wget = WGET_PATHS.find((path) => found.has(path));
    const base = `http://127.0.0.1:${port}`;
    let test: string[];
    if (node) {
      const probe = `const get = (p) => fetch('${base}' + p, { redirect: 'manual' }).then((r) => r.status); get('/readyz').then((s) => (s === 404 || s === 405 ? get('/health') : s)).then((s) => process.exit(s >= 200 && s < 300 ? 0 : 1), () => process.exit(1))`;
      test = ["CMD", node, "-e", probe];
    } else if (wget && found.has("/bin/sh")) {
      // busybox and GNU wget both print the status line with -S; exit codes do not tell 404 from 503.
      const script = `s=$(${wget} -S -O /dev/null ${base}/readyz 2>&1 | grep -o "HTTP/[0-9.]* [0-9]*" | tail -n 1); case "\${s##* }" in 2??) exit 0;; 404|405) ${wget} -q -O /dev/null ${base}/health;; *) exit 1;; esac`;
      test = ["CMD", "/bin/sh", "-c", script];
    } else return undefined;
    return {
      Test: test,
      Interval: SECOND_NS,
      Timeout: 3 * SECOND_NS,
      Retries: 3,
      StartPeriod: Math.max(startSeconds, 1) * SECOND_NS,
    };
  }

  /** Which of `paths` exist in `image`: read from a container created (never started) from it. */
  private async programs(image: string, paths: string[]): Promise<Set<string>> {
    const container = await this.docker.createContainer({
      Image: image,
      Entrypoint: ["/nonexistent"],
      Cmd: [],
      Labels: { [PLATFORM_LABELS.runtime]: "probe" },
      NetworkDisabled: true,
    });
    try {
      const found = new Set<string>();
      for (const path of paths) {
        const stat = await ignoreMissing(() => container.infoArchive({ path }));
        if (stat) found.add(path);
      }
      return found;
    } finally {
      await ignoreMissing(() => container.remove({ force: true })).catch(() => {});
    }
  }
}
