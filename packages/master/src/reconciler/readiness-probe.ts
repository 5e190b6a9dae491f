/** A readiness probe's verdict on a running challenge. */
export interface ProbeResult {
  ready: boolean;
  /** What was asked and what came back (no URL: it may name an internal host). */
  detail: string;
}

const PROBE_TIMEOUT_MS = 2_000;

async function get(baseUrl: string, path: string): Promise<number> {
  const response = await fetch(new URL(path, baseUrl), {
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    redirect: "manual",
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * Is the challenge at `baseUrl` ready? Its `GET /readyz` (every SDK challenge serves it: its
 * database and the author's checks) must answer 2xx; a service that has no /readyz (404 or
 * 405: not built on the SDK) is asked `GET /health` instead. Docker's own HEALTHCHECK verdict,
 * when the image has one, is taken as given.
 */
export async function probeReadiness(
  baseUrl: string,
  dockerHealth?: string | undefined,
): Promise<ProbeResult> {
  if (dockerHealth === "healthy") return { ready: true, detail: "docker healthcheck: healthy" };
  if (dockerHealth === "unhealthy")
    return { ready: false, detail: "docker healthcheck: unhealthy" };
  try {
    const readyz = await get(baseUrl, "/readyz");
    if (readyz !== 404 && readyz !== 405)
      return { ready: readyz >= 200 && readyz < 300, detail: `GET /readyz ${readyz}` };
    const health = await get(baseUrl, "/health");
    return { ready: health >= 200 && health < 300, detail: `GET /health ${health}` };
  } catch (error) {
    const reason =
      (error as Error).name === "TimeoutError"
        ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s`
        : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
    return { ready: false, detail: `unreachable (${reason})` };
  }
}
