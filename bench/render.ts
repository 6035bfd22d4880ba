/**
 * `npm run bench:render [-- ROOT]`: microseconds per render of three prompt templates (a typical
 * map prompt, a filter-heavy one, a loop), in this process, for the template runtime under ROOT
 * (this checkout by default). Run it on two checkouts one after the other to compare them: the
 * cost model (src/template/costs.ts) charges every call before it runs, and this is its price.
 */
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const { compileTemplate } = (await import(pathToFileURL(`${root}/src/template/jinja.ts`).href)) as typeof import("../src/template/jinja.ts");
const item = { title: "Attention Is All You Need", body: "word ".repeat(400), tags: ["nlp", "attention", "transformers", "translation"], year: 2017 };
const TEMPLATES: Record<string, string> = {
  typical: "Extract metadata from: {{ item.title }}\n\n{{ item.body }}",
  filters: "{{ item.title | upper }}: {{ item.body | truncate(200) }} {{ item.tags | join(', ') }} {{ item | tojson }} {{ item.tags | map('title') | list }}",
  loop: "{% for t in item.tags %}[{{ loop.index }}. {{ t | title }}]{% endfor %} {% for w in item.body.split()[:100] %}{{ w }}{% endfor %}",
};
const RENDERS = 20_000;
for (const [name, source] of Object.entries(TEMPLATES)) {
  const template = compileTemplate(source);
  for (let i = 0; i < 2_000; i++) template.render(item); // warm the JIT
  const started = performance.now();
  for (let i = 0; i < RENDERS; i++) template.render(item);
  console.log(`${name.padEnd(8)} ${(((performance.now() - started) * 1000) / RENDERS).toFixed(1).padStart(7)} µs per render`);
}
