/** Names of the four headers that carry a miner signature. */
export const SIGNATURE_HEADERS = {
  hotkey: "X-Hotkey",
  signature: "X-Signature",
  nonce: "X-Nonce",
  timestamp: "X-Timestamp",
} as const;

/** How far (seconds) a request timestamp may be from the receiver's clock, either way. */
export const DEFAULT_SIGNATURE_WINDOW_SECONDS = 300;
