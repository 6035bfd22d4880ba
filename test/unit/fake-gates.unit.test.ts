import { describe, expect, it } from "vitest";
import { Gates } from "../fake-model/gates.ts";
import { parseDirective } from "../fake-model/script.ts";

const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 0));
  return done;
};

describe("the fake model's gates", () => {
  it("let a tag's first calls through, hold the rest until opened, then let every call through", async () => {
    const gates = new Gates();
    expect(await settled(gates.pass("t", 2))).toBe(true);
    expect(await settled(gates.pass("t", 2))).toBe(true);
    const third = gates.pass("t", 2);
    const fourth = gates.pass("t", 2);
    expect([await settled(third), await settled(fourth), gates.held("t")]).toEqual([false, false, 2]);
    expect(await settled(gates.pass("other", 0))).toBe(false); // tags are separate
    gates.open("t");
    expect([await settled(third), await settled(fourth), gates.held("t")]).toEqual([true, true, 0]);
    expect(await settled(gates.pass("t", 2))).toBe(true);
    expect(gates.held("other")).toBe(1);
  });

  it("are read from a directive", () => {
    expect(parseDirective("x <<fake tag=a gate=3>>")?.gate).toBe(3);
    expect(parseDirective("x <<fake tag=a>>")?.gate).toBeNull();
  });
});
