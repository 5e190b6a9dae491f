/** What a workload wrote, each stream cut at its cap. */
export interface CapturedOutput {
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
}

class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  push(data: Buffer): void {
    if (this.truncated) return;
    const room = this.cap - this.size;
    if (data.length > room) {
      this.truncated = true;
      if (room > 0) this.chunks.push(data.subarray(0, room));
      this.size = this.cap;
      return;
    }
    this.chunks.push(data);
    this.size += data.length;
  }

  text(): string {
    const bytes = Buffer.concat(this.chunks, this.size);
    return (this.truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes).toString("utf8");
  }
}

/** The length of `bytes` without a UTF-8 sequence the cap cut in half. */
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

/**
 * Split Docker's multiplexed attach/log stream (8-byte frame headers: stream id, 3 zero bytes,
 * big-endian length) into stdout and stderr, keeping at most `cap` bytes of each and reading
 * (then discarding) the rest so the workload never blocks on a full pipe.
 */
export class OutputDemuxer {
  private readonly out: CappedBuffer;
  private readonly err: CappedBuffer;
  private pending: Buffer = Buffer.alloc(0);
  private frameStream = 0;
  private frameLeft = 0;

  constructor(cap: number) {
    this.out = new CappedBuffer(cap);
    this.err = new CappedBuffer(cap);
  }

  /** Feed the next chunk of the stream. */
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
      const part = data.subarray(0, take);
      // 1 is stdout; 2 is stderr; 0 (stdin echo) does not happen without a TTY and is dropped.
      if (this.frameStream === 1) this.out.push(part);
      else if (this.frameStream === 2) this.err.push(part);
      this.frameLeft -= take;
      data = data.subarray(take);
    }
  }

  /** The captured output so far. */
  result(): CapturedOutput {
    return {
      stdout: this.out.text(),
      stderr: this.err.text(),
      stdout_truncated: this.out.truncated,
      stderr_truncated: this.err.truncated,
    };
  }
}
