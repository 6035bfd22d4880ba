/** Filters and tests the renderer lacks are refused when the template is compiled (at submission), naming each. */
import { describe, expect, it } from "vitest";
import { compileTemplate } from "../../src/template/jinja";
import { SUPPORTED_FILTERS, SUPPORTED_TESTS } from "../../src/template/features";
import { InputError } from "../../src/lib/errors";

function refusal(source: string): InputError {
  try {
    compileTemplate(source, "prompt_template", []);
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error("not refused");
}

describe("template features", () => {
  it("refuses an unknown filter or test with unsupported_template_feature, naming each once", () => {
    const err = refusal("{{ item | random }} {% filter attr('x') %}x{% endfilter %} {{ item is escaped }} {{ item | random }}");
    expect(err.code).toBe("unsupported_template_feature");
    expect(err.details).toEqual([
      { path: "prompt_template", message: "filter `random`, filter `attr`, test `escaped` are not supported (docs/limits-and-errors.md lists what is)" },
    ]);
    expect(refusal("{% for x in item | attr('a') %}{% endfor %}").details[0]?.message).toContain("filter `attr`");
    expect(refusal("{{ item is filter }}").details[0]?.message).toContain("test `filter`");
    // The filter a test with an argument becomes is not a way in for other names.
    expect(refusal("{{ item | __test_nope(1) }}").details[0]?.message).toContain("filter `__test_nope`");
  });

  it("accepts every filter and test it lists, including format, sum, min and max", () => {
    const t = compileTemplate(
      "{{ '%s-%s' | format(item.a, item.b) }} {{ item.n | sum }} {{ item.n | min }} {{ item.n | max }} {{ item.a is string }}",
      "t",
      [],
    );
    expect(t.renderVars({ item: { a: "x", b: 2, n: [3, 1, 2] } })).toBe("x-2 6 1 3 True");
    for (const name of SUPPORTED_FILTERS) expect(() => compileTemplate(`{{ x | ${name} }}`, "t", [])).not.toThrow();
    for (const name of SUPPORTED_TESTS) {
      // `==`, `<`, … are names for select/reject only, as in Jinja2.
      const source = /^\w+$/.test(name) ? `{{ x is ${name} }}` : `{{ [x] | select('${name}', 1) | list }}`;
      expect(() => compileTemplate(source, "t", []), source).not.toThrow();
    }
  });

  it("format follows Python's % errors", () => {
    const t = (s: string) => compileTemplate(s, "t", []).renderVars({});
    expect(() => t("{{ '%s %s' | format(1) }}")).toThrow(/not enough arguments/);
    expect(() => t("{{ '%s' | format(1, 2) }}")).toThrow(/not all arguments converted/);
    expect(() => t("{{ '%d' | format('x') }}")).toThrow(/real number is required/);
    expect(t("{{ '%5.1f%%' | format(12.345) }}")).toBe(" 12.3%");
  });
});
