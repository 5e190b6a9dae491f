// A refusal somewhere in Intel's chain of trust. Every failure has its own stable code (stored
// with the verdict and keyed on by operators); the message is for humans and may change.

export class DcapChainError extends Error {
  override readonly name = "DcapChainError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const chainError = (code: string, message: string) => new DcapChainError(code, message);
