import { untilSignal } from "./_shared.js";

/** Thrown between start-up steps when a signal asked to stop. */
export class StopRequested extends Error {}

/**
 * What `platform dev` has started, and the signal that stops it: a signal at any point stops
 * what has started so far, in reverse order, even in the middle of start-up.
 */
export class DevLifecycle {
  /** Resolves with the signal's name once one arrives. */
  readonly signal: Promise<NodeJS.Signals>;
  private readonly cleanups: (() => Promise<void>)[] = [];
  private stopRequested = false;

  constructor(private readonly progress: (line: string) => void) {
    this.signal = untilSignal().then((name) => {
      this.stopRequested = true;
      return name;
    });
  }

  /** Run `cleanup` at stop (the last registered runs first). */
  onStop(cleanup: () => Promise<void>): void {
    this.cleanups.push(cleanup);
  }

  /** Between start-up steps: throws {@link StopRequested} if a signal arrived meanwhile. */
  checkpoint(): void {
    if (this.stopRequested) throw new StopRequested();
  }

  /** Run every cleanup once, newest first; one that fails is reported and the rest still run. */
  async stopAll(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) =>
        this.progress(`while stopping: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
  }
}
