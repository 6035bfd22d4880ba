import { describe, expect, it } from "vitest";
import { TurnBatch } from "../../durable-objects/coordinator/turn-batch";

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("TurnBatch", () => {
  it("runs items added in one event together, in one later turn, in the order they came", async () => {
    const batch = new TurnBatch<number>();
    const ran: number[] = [];
    const answers = [1, 2, 3].map((n) =>
      batch.add(async () => {
        ran.push(n);
        return n * 10;
      }),
    );
    expect(ran).toEqual([]); // nothing runs in the caller's event
    expect(await Promise.all(answers)).toEqual([10, 20, 30]);
    expect(ran).toEqual([1, 2, 3]);
    expect(batch.turns).toBe(1);
  });

  it("collects items that arrive in separate events before its turn comes", async () => {
    const batch = new TurnBatch<string>();
    const first = batch.add(async () => "a");
    await Promise.resolve(); // another microtask of the same event
    const second = batch.add(async () => "b");
    expect(await Promise.all([first, second])).toEqual(["a", "b"]);
    expect(batch.turns).toBe(1);
  });

  it("starts a new turn for an item that comes after the last turn ran", async () => {
    const batch = new TurnBatch<number>();
    expect(await batch.add(async () => 1)).toBe(1);
    expect(await batch.add(async () => 2)).toBe(2);
    expect(batch.turns).toBe(2);
  });

  it("rejects only the caller whose item threw; the others in its turn get their answers", async () => {
    const batch = new TurnBatch<number>();
    const ok1 = batch.add(async () => 1);
    const bad = batch.add(async () => {
      throw new Error("this report failed");
    });
    const ok2 = batch.add(async () => 2);
    await expect(bad).rejects.toThrow("this report failed");
    expect(await ok1).toBe(1);
    expect(await ok2).toBe(2);
    expect(batch.turns).toBe(1);
  });

  it("lets the others of a turn go on while one item waits (as separate events would)", async () => {
    const batch = new TurnBatch<string>();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const waiting = batch.add(async () => {
      order.push("waiting starts");
      await gate; // a limiter's answer, say
      order.push("waiting ends");
      return "waiting";
    });
    const quick = batch.add(async () => {
      order.push("quick");
      return "quick";
    });
    expect(await quick).toBe("quick"); // answered while the first still waits
    expect(order).toEqual(["waiting starts", "quick"]);
    release();
    expect(await waiting).toBe("waiting");
    expect(batch.turns).toBe(1);
  });

  it("gives an item added while a turn waits on I/O a turn of its own, and both finish", async () => {
    const batch = new TurnBatch<string>();
    const order: string[] = [];
    const slow = batch.add(async () => {
      order.push("slow starts");
      await tick();
      await tick();
      order.push("slow ends");
      return "slow";
    });
    await tick(); // the first turn is under way, waiting
    const late = batch.add(async () => {
      order.push("late");
      return "late";
    });
    expect(await Promise.all([slow, late])).toEqual(["slow", "late"]);
    expect(order[0]).toBe("slow starts");
    expect(order).toContain("late");
    expect(batch.turns).toBe(2);
  });
});
