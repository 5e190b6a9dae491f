import { describe, expect, it } from "vitest";
import { isMaxLimited, maxUpscaleU16 } from "./fixed-i32f32.js";

// Expected values are subtensor's own (pallets/subtensor/src/tests/math.rs at v3.3.13-393:
// test_vec_u16_max_upscale_to_u16 and test_check_vec_max_limited).
describe("I32F32 weight arithmetic", () => {
  it("max-upscales u16 weights as subtensor's vec_u16_max_upscale_to_u16", () => {
    const cases: [number[], number[]][] = [
      [[], []],
      [[0], [0]],
      [
        [0, 0],
        [0, 0],
      ],
      [[1], [65535]],
      [
        [0, 1],
        [0, 65535],
      ],
      [[65534], [65535]],
      [[65535], [65535]],
      [
        [65535, 65535],
        [65535, 65535],
      ],
      [
        [0, 1, 65534],
        [0, 1, 65535],
      ],
      [
        [0, 1, 2, 3, 4, 65533, 65535],
        [0, 1, 2, 3, 4, 65533, 65535],
      ],
      [
        [1, 2, 3],
        [21845, 43690, 65535],
      ],
      [
        [100, 200],
        [32768, 65535],
      ],
    ];
    for (const [input, expected] of cases) expect(maxUpscaleU16(input)).toEqual(expected);
  });

  it("rounds like the fixed-point chain, not like floating point", () => {
    // 20000 * (65535 / 40000) is 32767.5 exactly in reals, but the truncated I32F32 factor
    // lands just below the half and rounds down.
    expect(maxUpscaleU16([40000, 20000])).toEqual([65535, 32767]);
    expect(Math.round((20000 * 65535) / 40000)).toBe(32768);
  });

  it("checks the max weight limit as subtensor's check_vec_max_limited", () => {
    const max = 65535;
    const cases: [number[], number, boolean][] = [
      [[], 0, true],
      [[], max, true],
      [[max], max, true],
      [[max], max - 1, false],
      [[max], 0, false],
      [[0], max, true],
      [[0, max], max, true],
      [[0, max, max], Math.floor(max / 2), false],
      [[0, max, max], Math.floor(max / 2) + 1, true],
      [[0, max, max, max], Math.floor(max / 3) - 1, false],
      [[0, max, max, max], Math.floor(max / 3), true],
    ];
    for (const [values, limit, ok] of cases) expect(isMaxLimited(values, limit)).toBe(ok);
  });
});
