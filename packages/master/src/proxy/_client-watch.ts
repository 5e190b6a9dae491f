// Whether a native handler's client went away before its answer was written: both native
// handlers (passthrough and signed upload) skip the forward when it left early, and abort the
// exchange when it leaves during it, as the kit's routes do through the request's signal.
import type { ServerResponse } from "node:http";
import type { ProxyObservation } from "./_proxy-observation.js";
import type { UpstreamResponseWriter } from "./_upstream-response-writer.js";

export class ClientWatch {
  /** True once the client closed the connection before the answer was fully written. */
  gone = false;
  private writer: UpstreamResponseWriter | undefined;

  /** `observation` hears of a client that left before any answer (its 499). */
  constructor(res: ServerResponse, observation?: ProxyObservation) {
    res.once("close", () => {
      if (res.writableFinished) return;
      this.gone = true;
      observation?.clientLeft();
      this.writer?.clientLeft();
    });
  }

  /** The exchange to abort if the client leaves from now on. */
  follow(writer: UpstreamResponseWriter): void {
    this.writer = writer;
  }
}
