import { describe, expect, it } from "vitest";
import { OutputDemuxer } from "./_capped-output.js";

function frame(stream: number, text: string | Buffer): Buffer {
  const payload = typeof text === "string" ? Buffer.from(text) : text;
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe("OutputDemuxer", () => {
  it("splits stdout from stderr, whatever the chunking", () => {
    const stream = Buffer.concat([
      frame(1, "out-1 "),
      frame(2, "err-1 "),
      frame(1, "out-2"),
      frame(2, "err-2"),
    ]);
    for (const size of [1, 3, 7, 8, 9, stream.length]) {
      const demux = new OutputDemuxer(1024);
      for (let i = 0; i < stream.length; i += size) demux.write(stream.subarray(i, i + size));
      expect(demux.result()).toEqual({
        stdout: "out-1 out-2",
        stderr: "err-1 err-2",
        stdout_truncated: false,
        stderr_truncated: false,
      });
    }
  });

  it("keeps exactly the cap per stream and flags only the stream that was cut", () => {
    const demux = new OutputDemuxer(10);
    demux.write(frame(1, "0123456789"));
    demux.write(frame(2, "abc"));
    expect(demux.result().stdout_truncated).toBe(false);
    demux.write(frame(1, "overflow"));
    demux.write(frame(1, "more"));
    expect(demux.result()).toEqual({
      stdout: "0123456789",
      stderr: "abc",
      stdout_truncated: true,
      stderr_truncated: false,
    });
  });

  it("never ends a cut stream in half a UTF-8 character", () => {
    const demux = new OutputDemuxer(5);
    demux.write(frame(1, "abcdé€"));
    expect(demux.result().stdout).toBe("abcd");
    const whole = new OutputDemuxer(6);
    whole.write(frame(1, "abcdé€"));
    expect(whole.result().stdout).toBe("abcdé");
  });

  it("drops stdin frames", () => {
    const demux = new OutputDemuxer(100);
    demux.write(Buffer.concat([frame(0, "echo"), frame(1, "ok")]));
    expect(demux.result().stdout).toBe("ok");
  });
});
