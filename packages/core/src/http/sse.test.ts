import { describe, expect, it } from "vitest";
import { formatSseEvent, lastEventIdOf } from "./sse.js";

describe("sse", () => {
  it("formats events, splitting multi-line data", () => {
    expect(formatSseEvent({ id: "7", event: "log", data: "a\nb" })).toBe(
      "id: 7\nevent: log\ndata: a\ndata: b\n\n",
    );
    expect(formatSseEvent({ data: { ok: true }, retry: 1500 })).toBe(
      'retry: 1500\ndata: {"ok":true}\n\n',
    );
  });

  it("refuses an id or event name that would break the framing", () => {
    expect(() => formatSseEvent({ id: "1\ndata: forged", data: "x" })).toThrow(/single line/);
  });

  it("reads the resume point from Last-Event-ID, else the query", () => {
    expect(lastEventIdOf(new Request("http://h/", { headers: { "last-event-id": "9" } }))).toBe(
      "9",
    );
    expect(lastEventIdOf(new Request("http://h/?last_event_id=3"))).toBe("3");
    expect(lastEventIdOf(new Request("http://h/"))).toBeNull();
  });
});
