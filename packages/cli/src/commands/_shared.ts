/** A failure to explain to the user: printed as one line (no stack) and exit code 1. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** `--json`: machine-readable output for scripts. */
export const jsonFlag = {
  json: {
    type: "boolean",
    description: "Print machine-readable JSON instead of text",
    default: false,
  },
} as const;

/**
 * Run a command body and turn expected failures into a readable message and an exit code,
 * so no user ever sees a stack trace for a wrong flag or an unreachable master.
 */
export async function runCommand(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    // Loaded only on failure: every command imports this file, and `--help` should stay fast.
    const { ConfigError } = await import("@platform/core");
    const known = error instanceof CliError || error instanceof ConfigError;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${message}\n`);
    if (!known && process.env.DEBUG && error instanceof Error)
      process.stderr.write(`${error.stack}\n`);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  }
}

/** Resolve when the process is asked to stop (Ctrl-C or a service manager's SIGTERM). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** `--config`: the admin commands' settings file. */
export const configFlag = {
  config: {
    type: "string",
    description:
      "Settings file with master.registry_url, master.admin_url (default: its port plus one) and security.admin_token[_file] (default config/master.example.yaml)",
    valueHint: "file",
  },
} as const;

/** Print `value` as JSON with --json, else the human text. */
export function print(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}
