import { describe, expect, it } from "vitest";
import { mergeTcb, type TcbStatus } from "./tcb-status.js";

const v = (status: TcbStatus, ...advisoryIds: string[]) => ({ status, advisoryIds });

describe("combining the platform's, the TDX module's and the QE's TCB status", () => {
  it("keeps the worse status and every advisory once", () => {
    expect(mergeTcb(v("UpToDate"), v("UpToDate"))).toEqual(v("UpToDate"));
    expect(mergeTcb(v("SWHardeningNeeded", "SA-1"), v("OutOfDate", "SA-2", "SA-1"))).toEqual(
      v("OutOfDate", "SA-1", "SA-2"),
    );
    expect(mergeTcb(v("OutOfDate"), v("Revoked"))).toEqual(v("Revoked"));
    expect(mergeTcb(v("ConfigurationAndSWHardeningNeeded"), v("SWHardeningNeeded"))).toEqual(
      v("ConfigurationAndSWHardeningNeeded"),
    );
  });

  it("keeps a configuration need through being out of date, as Intel's QVL does", () => {
    expect(mergeTcb(v("ConfigurationNeeded"), v("OutOfDate"))).toEqual(
      v("OutOfDateConfigurationNeeded"),
    );
    expect(mergeTcb(v("OutOfDate"), v("ConfigurationAndSWHardeningNeeded"))).toEqual(
      v("OutOfDateConfigurationNeeded"),
    );
    expect(mergeTcb(v("ConfigurationNeeded"), v("Revoked"))).toEqual(v("Revoked"));
  });
});
