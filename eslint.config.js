import eslint from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", ".wrangler/", "worker-configuration.d.ts", "**/dist/"] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  { files: ["scripts/**/*.mjs", "bench/**/*.mjs", "test/**/*.mjs"], languageOptions: { globals: globals.node } },
  // The dashboard's browser modules (checked by assets/tsconfig.json through their JSDoc types).
  { files: ["assets/**/*.js"], languageOptions: { globals: globals.browser } },
  {
    // Tests read untyped JSON bodies from the API; `any` there is the honest type.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
