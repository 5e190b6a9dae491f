import {
  ensureImage,
  ignoreMissing,
  isMissing,
  PLATFORM_LABELS,
} from "@platform/challenge-sdk/sandbox";
import type Docker from "dockerode";
import { challengeContainerName, PORT_LABEL } from "../runtime/challenge-containers.js";
import { isPinned } from "./desired-state.js";

/** The label carrying a challenge container's spec fingerprint (desired-state.ts). */
export const SPEC_LABEL = "platform.spec";

/**
 * Was `error` the engine itself being out of reach (a refused, reset or missing socket), as
 * opposed to the engine answering "no"? dockerode passes the socket's errno code on.
 */
export function isEngineUnreachable(error: unknown): boolean {
  if ((error as { statusCode?: unknown })?.statusCode !== undefined) return false;
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

/**
 * What the reconciler reads from and does to the engine for challenge containers, by name
 * (`platform-challenge-<slug>`); building and starting one is ChallengeContainers.restart.
 */
export class EngineView {
  constructor(
    private readonly docker: Docker,
    private readonly pullTimeoutMs: number,
  ) {}

  /** The challenge's container, or null when there is none. */
  inspect(slug: string): Promise<Docker.ContainerInspectInfo | null> {
    return this.inspectName(challengeContainerName(slug));
  }

  /** The container of that name or id, or null when there is none. */
  async inspectName(name: string): Promise<Docker.ContainerInspectInfo | null> {
    try {
      return await this.docker.getContainer(name).inspect();
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** Stop (SIGTERM, then SIGKILL after `graceSeconds`) and remove a container; gone is fine. */
  async remove(id: string, graceSeconds = 10): Promise<void> {
    const container = this.docker.getContainer(id);
    await ignoreMissing(() => container.stop({ t: graceSeconds })).catch((error) => {
      // 304: already stopped.
      if ((error as { statusCode?: number }).statusCode !== 304) throw error;
    });
    await ignoreMissing(() => container.remove({ force: true }));
  }

  /** Rename a container (running or not): how an update hands the challenge's name over. */
  async rename(id: string, name: string): Promise<void> {
    await this.docker.getContainer(id).rename({ name });
  }

  /** Slugs and ids of the challenge containers `instanceId` (this deployment) owns. */
  async owned(instanceId: string): Promise<{ slug: string; id: string; name: string }[]> {
    const list = await this.docker.listContainers({
      all: true,
      filters: {
        label: [`${PLATFORM_LABELS.runtime}=challenge`, `${PLATFORM_LABELS.master}=${instanceId}`],
      },
    });
    return list.map((c) => ({
      slug: c.Labels[PLATFORM_LABELS.challenge] ?? "",
      id: c.Id,
      name: c.Names[0] ?? "",
    }));
  }

  /** The engine's record of `image` (pulled when the engine lacks it): its port, its command. */
  image(image: string): Promise<Docker.ImageInspectInfo> {
    return ensureImage(this.docker, image, { pull: true, timeoutMs: this.pullTimeoutMs });
  }

  /**
   * Resolve `image` to content: the digest a registry gave it (`repo@sha256:…`) when the engine
   * knows one, else the engine's image id (an image built or loaded here). Pulls when the
   * engine lacks it; throws SandboxRefusal when it cannot be had.
   */
  async pin(image: string): Promise<string> {
    const info = await ensureImage(this.docker, image, {
      pull: true,
      timeoutMs: this.pullTimeoutMs,
    });
    if (isPinned(image)) return image;
    const repository = image.replace(/:[^/:@]+$/, "");
    const digest = (info.RepoDigests ?? []).find((entry) =>
      entry.startsWith(`${repository}@sha256:`),
    );
    return digest ?? info.Id;
  }
}

/** The URL a running challenge container answers at on `network`, or null without an address. */
export function containerUrl(info: Docker.ContainerInspectInfo, network: string): string | null {
  const address = info.NetworkSettings.Networks[network]?.IPAddress;
  const port = info.Config.Labels?.[PORT_LABEL];
  if (!address || !port) return null;
  return `http://${address}:${port}`;
}
