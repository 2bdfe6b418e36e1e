/**
 * The version of the screens' rules and thresholds (semantic: a change that moves any figure is a new minor
 * version at least; one that changes what a figure means, a new major). Every feed row, report page and
 * badge says which version made it; docs/screens.md, "Changelog", says what each version changed.
 */
export const METHODOLOGY_VERSION = "1.4.0";
