/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Ask again after this long (default 25 ms). */
  intervalMs?: number;
  /** What the error says was awaited (default "condition"). */
  what?: string;
}

/**
 * Ask `condition` until it answers something truthy, and resolve to that answer; throw after
 * `timeoutMs`. A `condition` that throws ends the wait with its error (a worker that died early
 * fails the test at once, not after the timeout). Independent of the test runner.
 * @example const row = await waitFor(async () => (await sql`select * from jobs where done`)[0], { timeoutMs: 10_000 });
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, null | undefined | false>> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await condition();
    if (answer) return answer as Exclude<T, null | undefined | false>;
    if (Date.now() > deadline) {
      throw new Error(`${options.what ?? "condition"} not met within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
