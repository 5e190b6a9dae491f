/** The stable codes of a {@link SandboxRefusal}. */
export type SandboxRefusalCode =
  | "weakening_refused"
  | "limit_exceeded"
  | "invalid_label"
  | "invalid_file"
  | "image_unavailable";

/**
 * A run the sandbox will not do as asked: a weakening, a limit above its maximum, a reserved
 * label, a bad file, an image the engine cannot get. Each caller speaks its own language on top
 * (the task runners throw `TaskRejectedError`, the master's broker answers 400), so this class
 * carries only what both need: a stable `code`, a message that starts with the field it names,
 * and `details` for machines (`field`, `maximum`, a file's `index`).
 */
export class SandboxRefusal extends Error {
  override readonly name = "SandboxRefusal";
  /** Asking again cannot help: a job worker that sees this buries the job. */
  readonly retryable = false;

  constructor(
    readonly code: SandboxRefusalCode,
    message: string,
    readonly details: Readonly<Record<string, string | number>> = {},
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
