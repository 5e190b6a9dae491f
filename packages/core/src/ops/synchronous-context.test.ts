// The explicit context manager: a context is active for exactly the synchronous call it was
// entered for (nested calls stack, a throw unwinds), and never across an await.
import { createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { SynchronousContextManager } from "./synchronous-context.js";

const KEY = createContextKey("test");

describe("SynchronousContextManager", () => {
  it("makes a context active for the synchronous call, nested calls stacked", () => {
    const manager = new SynchronousContextManager();
    const outer = ROOT_CONTEXT.setValue(KEY, "outer");
    const inner = ROOT_CONTEXT.setValue(KEY, "inner");
    expect(manager.active()).toBe(ROOT_CONTEXT);
    const seen = manager.with(outer, () => {
      const during = manager.with(
        inner,
        (a: number, b: number) => [manager.active(), a + b],
        undefined,
        1,
        2,
      );
      return [manager.active(), ...during];
    });
    expect(seen).toEqual([outer, inner, 3]);
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it("unwinds on a throw", () => {
    const manager = new SynchronousContextManager();
    expect(() =>
      manager.with(ROOT_CONTEXT.setValue(KEY, 1), () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it("does not carry a context across an await (the caller passes it on)", async () => {
    const manager = new SynchronousContextManager();
    const traced = ROOT_CONTEXT.setValue(KEY, "traced");
    const after = await manager.with(traced, async () => {
      expect(manager.active()).toBe(traced);
      await Promise.resolve();
      return manager.active();
    });
    expect(after).toBe(ROOT_CONTEXT);
    const callback = () => manager.active();
    expect(manager.bind(traced, callback)).toBe(callback);
  });
});
