import { StringDecoder } from "node:string_decoder";

/** The longest `log` event line; a longer line is cut into pieces of this size. */
export const MAX_LINE_CHARS = 64 * 1024;

type StreamName = "stdout" | "stderr";
type LineListener = (stream: StreamName, line: string) => void;

/** One stream's output: kept up to `cap` bytes, and split into lines for live events. */
class StreamCapture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";

  constructor(
    private readonly name: StreamName,
    private readonly cap: number,
    private readonly onLine: LineListener | undefined,
  ) {}

  push(data: Buffer): void {
    if (this.truncated) return;
    const room = this.cap - this.size;
    let kept = data;
    if (data.length > room) {
      this.truncated = true;
      kept = data.subarray(0, room);
    }
    if (kept.length) {
      this.chunks.push(kept);
      this.size += kept.length;
      // Without a listener there is nobody to split lines for.
      if (this.onLine) this.lines(this.decoder.write(kept));
    }
    // Events stop where the kept output stops, so what was streamed is what is returned.
    if (this.truncated) this.flush();
  }

  private lines(text: string): void {
    let rest = this.partial + text;
    for (let newline = rest.indexOf("\n"); newline !== -1; newline = rest.indexOf("\n")) {
      this.emit(rest.slice(0, newline));
      rest = rest.slice(newline + 1);
    }
    while (rest.length > MAX_LINE_CHARS) {
      this.onLine?.(this.name, rest.slice(0, MAX_LINE_CHARS));
      rest = rest.slice(MAX_LINE_CHARS);
    }
    this.partial = rest;
  }

  private emit(line: string): void {
    const clean = line.endsWith("\r") ? line.slice(0, -1) : line;
    for (let i = 0; i < clean.length; i += MAX_LINE_CHARS) {
      this.onLine?.(this.name, clean.slice(i, i + MAX_LINE_CHARS));
    }
    if (clean.length === 0) this.onLine?.(this.name, "");
  }

  /** Emits the last line when it had no newline. */
  flush(): void {
    if (!this.onLine) return;
    const rest = this.partial + this.decoder.end();
    this.partial = "";
    if (rest.length) this.emit(rest);
  }

  text(): string {
    const bytes = Buffer.concat(this.chunks, this.size);
    // A cap can cut a UTF-8 sequence in half; drop the broken tail rather than return U+FFFD.
    return (this.truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes).toString("utf8");
  }
}

/** The length of `bytes` without a trailing UTF-8 sequence that was cut short. */
function completeUtf8Length(bytes: Buffer): number {
  let i = bytes.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && (bytes[i]! & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  if (i < 0) return bytes.length;
  const lead = bytes[i]!;
  const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  return need > continuation ? i : bytes.length;
}

/** What a task wrote, each stream cut at its cap. */
export interface CapturedOutput {
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

/**
 * Reads Docker's multiplexed attach or log stream (frames: stream id, 3 zero bytes, big-endian
 * length, payload), keeping at most `cap` bytes per stream and reading (then dropping) the
 * rest, so a chatty task never blocks on a full pipe. Complete lines go to `onLine` live.
 * @example const capture = new OutputCapture(1 << 20); stream.on("data", (chunk) => capture.write(chunk));
 */
export class OutputCapture {
  private readonly out: StreamCapture;
  private readonly err: StreamCapture;
  private pending: Buffer = Buffer.alloc(0);
  private frameStream = 0;
  private frameLeft = 0;

  constructor(cap: number, onLine?: LineListener) {
    this.out = new StreamCapture("stdout", cap, onLine);
    this.err = new StreamCapture("stderr", cap, onLine);
  }

  /** Feeds the next chunk of the multiplexed stream. */
  write(chunk: Buffer): void {
    let data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (data.length) {
      if (this.frameLeft === 0) {
        if (data.length < 8) {
          this.pending = Buffer.from(data);
          return;
        }
        this.frameStream = data[0]!;
        this.frameLeft = data.readUInt32BE(4);
        data = data.subarray(8);
        continue;
      }
      const take = Math.min(this.frameLeft, data.length);
      this.writeStream(
        this.frameStream === 2 ? "stderr" : this.frameStream === 1 ? "stdout" : null,
        data.subarray(0, take),
      );
      this.frameLeft -= take;
      data = data.subarray(take);
    }
  }

  /** Feeds bytes already known to belong to one stream (a non-multiplexed source). */
  writeStream(stream: StreamName | null, data: Buffer): void {
    // Stream 0 (stdin echo) cannot happen without a TTY; it is dropped.
    if (stream === "stdout") this.out.push(data);
    else if (stream === "stderr") this.err.push(data);
  }

  /** Emits the unterminated last lines; call once the stream has ended. */
  end(): void {
    this.out.flush();
    this.err.flush();
  }

  /** The output kept so far, each stream cut at its cap (never inside a UTF-8 character). */
  result(): CapturedOutput {
    return {
      stdout: this.out.text(),
      stderr: this.err.text(),
      stdoutTruncated: this.out.truncated,
      stderrTruncated: this.err.truncated,
    };
  }
}
