// The rules the project's conventions rest on (CONTRIBUTING.md), checked with type information.
import tseslint from "typescript-eslint";

const RULES = {
  // A promise no one awaits or catches is a rejection no one sees.
  "@typescript-eslint/no-floating-promises": "error",
  "@typescript-eslint/no-misused-promises": "error",
  // Every variant is named where a union is switched on, as ts-pattern's .exhaustive() does: a
  // `default:` does not stand in for a missing case (it may only hold `unreachable(x)`, x: never).
  "@typescript-eslint/switch-exhaustiveness-check": "error",
  "@typescript-eslint/no-explicit-any": "error",
  "@typescript-eslint/no-non-null-assertion": "error",
  // One import statement a module, its types beside its values (`import { type X, y }`).
  "no-duplicate-imports": ["error", { includeExports: false }],
};

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "vectors/*", "!vectors/src/", "conformance/**", "aegis-demo/**", "packages/*/bin/**", "packages/mcp/test/fixtures/**", "eslint.config.js", ".stryker-tmp/**", "reports/**"] },
  {
    files: ["packages/*/src/**/*.ts", "packages/*/test/**/*.ts", "vectors/src/**/*.ts", "bench/src/**/*.ts", "test/**/*.ts", "vitest.config.ts", "vitest.mutation.config.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: "./tsconfig.check.json", tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: RULES,
  },
  {
    // The report page: typed against the DOM, and no Node type, by its own tsconfig.
    files: ["packages/page/src/**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: "./packages/page/tsconfig.json", tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: RULES,
  },
);


