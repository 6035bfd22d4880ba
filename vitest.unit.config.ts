import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { name: "unit", include: ["test/unit/**/*.unit.test.ts", "test/hostile/**/*.unit.test.ts"], environment: "node", maxWorkers: 2 },
});
