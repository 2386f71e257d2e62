// eslint for the item explorer's page script (a browser script, no modules, no network).
// Run: npm ci --prefix packaging/eslint && packaging/eslint/node_modules/.bin/eslint
//   --config packaging/eslint/eslint.config.mjs src/conceptcomb/leaderboard/explore/static
import js from "@eslint/js";
import globals from "globals";

// Run from the repository root with --config (its root is then the base path).
export default [
  js.configs.recommended,
  {
    files: ["src/conceptcomb/leaderboard/explore/static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: { ...globals.browser }
    },
    rules: {
      // Every text of the page is untrusted: never parsed as HTML, never run.
      "no-restricted-properties": ["error",
        { property: "innerHTML", message: "show text with textContent" },
        { property: "outerHTML", message: "show text with textContent" },
        { property: "insertAdjacentHTML", message: "show text with textContent" }],
      "no-restricted-globals": ["error", "fetch", "XMLHttpRequest", "WebSocket", "EventSource"],
      "no-eval": "error",
      "no-implied-eval": "error",
      "no-new-func": "error",
      "eqeqeq": "error",
      "strict": ["error", "function"],
      "no-var": "error",
      "prefer-const": "error"
    }
  }
];
