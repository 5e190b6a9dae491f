import { readFileSync, statSync } from "node:fs";
import { basename, extname } from "node:path";
import { signRequest } from "@platform/core";
import { defineCommand } from "citty";
import { callMaster } from "./_master-client.js";
import { masterUrl, minerFlags, minerKey } from "./_miner.js";
import { CliError, jsonFlag, print, runCommand } from "./_shared.js";

const CONTENT_TYPES: Record<string, string> = {
  ".zip": "application/zip",
  ".json": "application/json",
};

function size(bytes: number): string {
  return bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
}

/** A body stream that reports how much of it has been sent. */
function withProgress(
  bytes: Uint8Array,
  report: (sent: number) => void,
): ReadableStream<Uint8Array> {
  const chunk = 64 * 1024;
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close();
        return;
      }
      const next = bytes.subarray(offset, offset + chunk);
      offset += next.byteLength;
      controller.enqueue(next);
      report(offset);
    },
  });
}

/** `platform submit <slug> <file>`: a signed upload through the master. */
export default defineCommand({
  meta: {
    name: "submit",
    description:
      "Sign a submission with your hotkey and upload it to a challenge through the master",
  },
  args: {
    slug: { type: "positional", description: "The challenge's slug", required: true },
    file: {
      type: "positional",
      description: "The submission: a .zip bundle or a .json body",
      required: true,
    },
    ...minerFlags,
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      let bytes: Uint8Array;
      try {
        if (!statSync(args.file).isFile()) throw new Error("not a file");
        bytes = new Uint8Array(readFileSync(args.file));
      } catch (error) {
        throw new CliError(
          `cannot read ${args.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
      const contentType =
        CONTENT_TYPES[extname(args.file).toLowerCase()] ?? "application/octet-stream";
      const pair = await minerKey(args);
      const base = masterUrl(args.master);
      // The file name rides in the query, which the signature covers: the master forwards it
      // to the challenge as X-Submission-Filename, so it must be the miner's signed word too.
      const path = `/v1/challenges/${encodeURIComponent(args.slug)}/submissions?${new URLSearchParams({ filename: basename(args.file) })}`;
      const headers = {
        ...signRequest(pair, {
          method: "POST",
          url: `${base}${path}`,
          body: bytes,
          slug: args.slug,
        }),
        "content-type": contentType,
        "content-length": String(bytes.byteLength),
      };
      const interactive = process.stderr.isTTY && !args.json;
      let lastPercent = -1;
      const body = withProgress(bytes, (sent) => {
        const percent = Math.floor((sent / Math.max(bytes.byteLength, 1)) * 100);
        if (!interactive || percent === lastPercent) return;
        lastPercent = percent;
        process.stderr.write(
          `\ruploading ${size(bytes.byteLength)} to ${args.slug} as ${pair.address}: ${percent}%`,
        );
      });
      if (!interactive && !args.json)
        process.stderr.write(
          `uploading ${size(bytes.byteLength)} to ${args.slug} as ${pair.address}\n`,
        );
      const { body: reply } = await callMaster<Record<string, unknown>>(base, path, {
        method: "POST",
        headers,
        body,
        duplex: "half",
        expect: [200, 201, 202],
      } as RequestInit & { expect: number[] });
      if (interactive) process.stderr.write("\n");
      const id = reply.id ?? reply.submission_id;
      print(args.json, reply, () =>
        [
          `submitted: ${typeof id === "string" || typeof id === "number" ? id : JSON.stringify(reply)}`,
          id ? `follow it with: platform status ${args.slug} ${id} --watch` : "",
        ]
          .filter(Boolean)
          .join("\n"),
      );
    }),
});
