import { describe, expect, it } from "vitest";
import { MAX_LINE_CHARS, OutputCapture } from "./output-capture.js";

/** One frame of Docker's multiplexed stream. */
function frame(stream: 1 | 2, text: string | Buffer): Buffer {
  const payload = typeof text === "string" ? Buffer.from(text) : text;
  const head = Buffer.alloc(8);
  head[0] = stream;
  head.writeUInt32BE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

function capture(cap = 1024) {
  const lines: string[] = [];
  const output = new OutputCapture(cap, (stream, line) => lines.push(`${stream}:${line}`));
  return { output, lines };
}

describe("OutputCapture", () => {
  it("splits frames into stdout and stderr, whatever the chunking, and emits lines live", () => {
    const { output, lines } = capture();
    const bytes = Buffer.concat([frame(1, "one\ntw"), frame(2, "err\r\n"), frame(1, "o\nlast")]);
    // One byte at a time: headers and lines split anywhere.
    for (const byte of bytes) output.write(Buffer.from([byte]));
    expect(lines).toEqual(["stdout:one", "stderr:err", "stdout:two"]);
    output.end();
    expect(lines.at(-1)).toBe("stdout:last");
    expect(output.result()).toEqual({
      stdout: "one\ntwo\nlast",
      stderr: "err\r\n",
      stdoutTruncated: false,
      stderrTruncated: false,
    });
  });

  it("keeps at most cap bytes per stream, drops the rest, and stops line events there", () => {
    const { output, lines } = capture(10);
    output.write(frame(1, "123456\n789\nabcdef\n"));
    output.write(frame(2, "short\n"));
    output.end();
    expect(output.result()).toEqual({
      stdout: "123456\n789",
      stderr: "short\n",
      stdoutTruncated: true,
      stderrTruncated: false,
    });
    expect(lines).toEqual(["stdout:123456", "stdout:789", "stderr:short"]);
  });

  it("never returns half a UTF-8 character at the cap", () => {
    const { output } = capture(4);
    output.write(frame(1, "ab€")); // € is 3 bytes: the cap falls inside it
    expect(output.result().stdout).toBe("ab");
  });

  it("decodes a character split across frames", () => {
    const { output, lines } = capture();
    const euro = Buffer.from("€\n");
    output.write(frame(1, euro.subarray(0, 1)));
    output.write(frame(1, euro.subarray(1)));
    expect(lines).toEqual(["stdout:€"]);
  });

  it("cuts an endless line into bounded events", () => {
    const { output, lines } = capture(MAX_LINE_CHARS * 3);
    output.write(frame(1, "x".repeat(MAX_LINE_CHARS * 2 + 5)));
    output.end();
    expect(lines.map((line) => line.length - "stdout:".length)).toEqual([
      MAX_LINE_CHARS,
      MAX_LINE_CHARS,
      5,
    ]);
  });
});

// The master's broker reads workload output through the same capture, without line events.
describe("OutputCapture without a line listener", () => {
  function muxFrame(stream: number, text: string | Buffer): Buffer {
    const payload = typeof text === "string" ? Buffer.from(text) : text;
    const head = Buffer.alloc(8);
    head[0] = stream;
    head.writeUInt32BE(payload.length, 4);
    return Buffer.concat([head, payload]);
  }

  it("splits stdout from stderr, whatever the chunking", () => {
    const stream = Buffer.concat([
      muxFrame(1, "out-1 "),
      muxFrame(2, "err-1 "),
      muxFrame(1, "out-2"),
      muxFrame(2, "err-2"),
    ]);
    for (const size of [1, 3, 7, 8, 9, stream.length]) {
      const demux = new OutputCapture(1024);
      for (let i = 0; i < stream.length; i += size) demux.write(stream.subarray(i, i + size));
      expect(demux.result()).toEqual({
        stdout: "out-1 out-2",
        stderr: "err-1 err-2",
        stdoutTruncated: false,
        stderrTruncated: false,
      });
    }
  });

  it("keeps exactly the cap per stream and flags only the stream that was cut", () => {
    const demux = new OutputCapture(10);
    demux.write(muxFrame(1, "0123456789"));
    demux.write(muxFrame(2, "abc"));
    expect(demux.result().stdoutTruncated).toBe(false);
    demux.write(muxFrame(1, "overflow"));
    demux.write(muxFrame(1, "more"));
    expect(demux.result()).toEqual({
      stdout: "0123456789",
      stderr: "abc",
      stdoutTruncated: true,
      stderrTruncated: false,
    });
  });

  it("never ends a cut stream in half a UTF-8 character", () => {
    const demux = new OutputCapture(5);
    demux.write(muxFrame(1, "abcdé€"));
    expect(demux.result().stdout).toBe("abcd");
    const whole = new OutputCapture(6);
    whole.write(muxFrame(1, "abcdé€"));
    expect(whole.result().stdout).toBe("abcdé");
  });

  it("drops stdin frames", () => {
    const demux = new OutputCapture(100);
    demux.write(Buffer.concat([muxFrame(0, "echo"), muxFrame(1, "ok")]));
    demux.end();
    expect(demux.result().stdout).toBe("ok");
  });
});
