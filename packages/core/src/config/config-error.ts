/** One bad setting and what is wrong with it (never its value: values may be secrets). */
export interface ConfigIssue {
  /** The environment variable (or flag) at fault, e.g. `PORT` or `--port`. */
  variable: string;
  message: string;
}

// Registered globally, so an error thrown by one copy of core is recognised by another: npm
// installs two copies when versions drift (a global CLI next to a project's own SDK).
const BRAND = Symbol.for("@platform/core.ConfigError");

/**
 * A configuration the user must fix, listing EVERY bad setting at once. No message holds a
 * value, so it is safe to print and log; a CLI prints it without a stack trace and exits 1.
 * @example throw new ConfigError([{ variable: "PORT", message: "must be an integer" }], "master configuration")
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly issues: readonly ConfigIssue[];

  /** `subject` names what is invalid in the first line: "Invalid {subject}:". */
  constructor(issues: readonly ConfigIssue[], subject = "configuration") {
    const lines = issues.map((issue) => `  - ${issue.variable}: ${issue.message}`);
    super(`Invalid ${subject}:\n${lines.join("\n")}`);
    this.issues = issues;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** `instanceof ConfigError` holds for a ConfigError from any copy of @platform/core. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // A subclass keeps the ordinary prototype check: a plain ConfigError is not one of it.
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` asks about
    if (this !== ConfigError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === "object" && value !== null && BRAND in value;
  }
}
