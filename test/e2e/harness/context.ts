/** What every e2e test file needs: the running servers' URLs and a map request builder. */
import { inject } from "vitest";
import { ECHO_SCHEMA, fake } from "./api.ts";
import type { TagStats } from "../../fake-model/server.ts";

export const base = (): string => inject("fanoutUrl");
export const fakeUrl = (): string => inject("fakeUrl");

let counter = 0;
/** A tag unique to this test run, so counters at the fake model server are the test's own. */
export function uniqueTag(name: string): string {
  return `${name}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
}

export async function fakeStats(tag: string): Promise<TagStats> {
  return (await fetch(`${fakeUrl()}/_fake/stats?tag=${tag}`)).json();
}

/** Lets every call of `tag` held at its gate (`gate=` in its directive: test/fake-model/gates.ts) go on, and the later ones through. */
export async function openGate(tag: string): Promise<void> {
  const res = await fetch(`${fakeUrl()}/_fake/gates?tag=${encodeURIComponent(tag)}`, { method: "POST" });
  if (res.status !== 204) throw new Error(`the fake model did not open the gate of ${tag}: ${res.status}`);
}

/** Items whose prompts script the fake model: steps[i] applies to item i. */
export function scriptedMap(tag: string, steps: string[], overrides: Record<string, unknown> = {}, ms?: number) {
  return {
    inputs: steps.map((s, i) => ({ text: `item ${i}`, d: fake(tag, i, s, ms) })),
    prompt_template: "Summarize {{ item.text }} {{ item.d }}",
    output_schema: ECHO_SCHEMA,
    model: "openai/gpt-6-luna",
    ...overrides,
  };
}

/** The provider batches the fake holds (both providers'), as its `/_fake/batches` lists them. */
export async function fakeBatches(): Promise<
  { id: string; provider: string; requests: number; custom_ids: string[]; tags: (string | null)[]; cancelled: boolean }[]
> {
  return (await fetch(`${fakeUrl()}/_fake/batches`)).json() as never;
}
