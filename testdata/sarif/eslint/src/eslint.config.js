// Flat config for the fixture: a handful of core rules at mixed severities,
// so the SARIF log has errors and warnings with known locations.
export default [
  {
    files: ["**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    rules: {
      "no-unused-vars": "warn",
      "no-eval": "error",
      "eqeqeq": "error",
      "no-var": "warn",
      "prefer-const": "warn",
    },
  },
];
