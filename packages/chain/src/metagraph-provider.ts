/** Where a hotkey's uid is learned: the chain's `Keys` (`chainMetagraph`), or a file or URL. */
export interface MetagraphProvider {
  /** hotkey -> uid, as of now. Rejects when the source cannot be read or is malformed. */
  uids(): Promise<Map<string, number>>;
}

/** A metagraph document that cannot be used; the message says which rule it broke. */
export class MetagraphError extends Error {
  override readonly name = "MetagraphError";
}
