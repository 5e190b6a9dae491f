import { describe, expect, it } from "vitest";
import { knownBodyOf, textResponse } from "./_known-body.js";

describe("responses the kit builds from a string", () => {
  it("read like new Response(text): status, headers, every body reader, bodyUsed", async () => {
    const init = {
      status: 201,
      statusText: "Made",
      headers: { "content-type": "application/json" },
    };
    const text = '{"ok":true}';
    const made = textResponse(text, init);
    const plain = new Response(text, init);
    expect(made).toBeInstanceOf(Response);
    expect([made.status, made.statusText, made.ok, made.type]).toEqual([
      plain.status,
      plain.statusText,
      plain.ok,
      plain.type,
    ]);
    expect([...made.headers]).toEqual([...plain.headers]);
    expect(made.bodyUsed).toBe(false);
    expect(await made.clone().json()).toEqual({ ok: true });
    expect(new Uint8Array(await made.clone().arrayBuffer())).toEqual(
      new TextEncoder().encode(text),
    );
    expect(await (await made.clone().blob()).text()).toBe(text);
    expect(await made.text()).toBe(text);
    expect(made.bodyUsed).toBe(true);
    await expect(made.text()).rejects.toThrow(TypeError);
    expect(() => made.clone()).toThrow(TypeError);
  });

  it("streams its body like any Response, and adds the default type when none is named", async () => {
    const made = textResponse("hello", {});
    expect(made.headers.get("content-type")).toBe(
      new Response("hello").headers.get("content-type"),
    );
    const reader = made.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe("hello");
    expect(made.bodyUsed).toBe(true);
  });

  it("refuses a body on a status that cannot have one, as Response does", () => {
    expect(() => textResponse("x", { status: 204 })).toThrow(TypeError);
  });

  it("hands its text to the adapter only while nobody has read the body", async () => {
    const made = textResponse("once", { headers: { "content-type": "text/plain" } });
    expect(knownBodyOf(made)).toBe("once");
    expect(knownBodyOf(new Response("not ours"))).toBeUndefined();
    // Headers set after the fact (the request id) stay on the same response.
    made.headers.set("x-request-id", "r1");
    expect(made.clone().headers.get("x-request-id")).toBe("r1");
    await made.text();
    expect(knownBodyOf(made)).toBeUndefined();
  });
});
