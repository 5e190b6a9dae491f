/** The step of a task container's run that Docker failed. */
export type ContainerRunStep = "files" | "create" | "attach" | "start" | "wait" | "inspect";

/**
 * Docker failed a step of `runTaskContainer`; `step` says which and `cause` is Docker's own
 * error. Each caller maps it to its own answer (a task error, a broker 400 or 500).
 */
export class ContainerRunError extends Error {
  override readonly name = "ContainerRunError";
  constructor(
    readonly step: ContainerRunStep,
    cause: unknown,
  ) {
    super(`Docker ${step} failed`, { cause });
  }
}
