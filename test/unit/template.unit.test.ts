import { describe, expect, it } from "vitest";
import { compileTemplate } from "../../src/template/jinja";
import { InputError } from "../../src/lib/errors";

function codeOf(source: string): string | null {
  try {
    compileTemplate(source);
    return null;
  } catch (err) {
    return err instanceof InputError ? err.code : "other";
  }
}

describe("the item check on the parsed template", () => {
  it.each([
    "{{ item }}",
    "{{ item['k'] }}",
    "{{ item.k }}",
    "{{ item | upper }}",
    "{% for x in item %}{{ x }}{% endfor %}",
    "{% if item %}y{% endif %}",
    "{{ 'a' if item else 'b' }}",
    "{{ f(item) }}",
    "{{ x | default(item) }}",
    "{{ xs[item] }}",
    "{% set y = item %}{{ y }}",
    "{% for item in xs %}{% endfor %}{{ item }}",
  ])("accepts %s", (source) => {
    expect(codeOf(source)).toBeNull();
  });

  it.each([
    "hello",
    "{% for item in xs %}{{ item }}{% endfor %}",
    "{{ x.item }}",
    "{{ f(item=1) }}",
    "{# {{ item }} #}",
    "{% macro m(item) %}{{ item }}{% endmacro %}",
    "{% set item = 1 %}{{ item }}",
    "{{ 'item' }}",
  ])("rejects %s with template_missing_item", (source) => {
    expect(codeOf(source)).toBe("template_missing_item");
  });

  it("reports syntax errors with the parser's message", () => {
    expect(codeOf("{{ item ")).toBe("template_syntax");
    expect(codeOf("{% if item %}")).toBe("template_syntax");
    try {
      compileTemplate("{% for %}");
    } catch (err) {
      expect((err as InputError).details).toEqual([{ path: "prompt_template", message: expect.any(String) }]);
    }
  });

  it("fails at render time, not silently, on an unknown filter", () => {
    expect(() => compileTemplate("{{ item | nosuchfilter }}").render("x")).toThrow(/nosuchfilter/);
  });
});
