// A challenge listening on a socket: an instance served by core's node adapter, and the close
// that stops listening first and undoes the instance after.
import { serve } from "@platform/core";
import {
  type ChallengeInstance,
  type InstanceBlueprint,
  openInstance,
  type StartOptions,
} from "./challenge-instance.js";

/** A challenge listening on a socket. */
export interface RunningChallenge<Cfg = unknown, State = unknown> {
  /** Base URL, e.g. http://127.0.0.1:8000 */
  url: string;
  host: string;
  port: number;
  /** Its context (sql, config, state...) and `fetch`, to answer a request in-process. */
  instance: ChallengeInstance<Cfg, State>;
  /**
   * Stop listening (in-flight requests finish briefly), run the `onClose` cleanups (last
   * registered first), then close the database if the challenge opened it. Idempotent.
   */
  close(): Promise<void>;
}

/** Open an instance of `blueprint` and listen on HOST:PORT (options win over the environment). */
export async function startChallenge<Cfg, State>(
  blueprint: InstanceBlueprint & { version: string },
  options: StartOptions = {},
): Promise<RunningChallenge<Cfg, State>> {
  const opened = await openInstance<Cfg, State>(blueprint, options);
  const { instance } = opened;
  try {
    const server = await serve(instance.fetch, {
      host: instance.settings.host,
      port: instance.settings.port,
      log: instance.log,
    });
    instance.log.info("challenge listening", {
      url: server.url,
      slug: blueprint.slug,
      version: blueprint.version,
    });
    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      host: server.host,
      port: server.port,
      instance,
      close: () =>
        (closing ??= (async () => {
          try {
            await server.close();
          } finally {
            await opened.close();
          }
        })()),
    };
  } catch (error) {
    await opened.close().catch(() => {});
    throw error;
  }
}
