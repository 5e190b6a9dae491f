/**
 * The least CPU time, in microseconds, `run` takes over `rounds` runs, after one run that warms
 * the JIT: what a growth test compares at two input sizes. CPU time, not wall time: on a loaded
 * machine a longer run is preempted more often, so a wall-clock ratio grows with the load (a
 * linear tokenizer measured 29 times slower for 8 times its input beside a busy loop). The
 * process's CPU, so the code's garbage collection counts as its own.
 */
export function leastCpuMicros(run: () => void, rounds = 5): number {
  run();
  let least = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    least = Math.min(least, used.user + used.system);
  }
  return least;
}
