/** Longest expression `/api/calc` takes: checked by its input schema, before the engine is loaded. */
export const MAX_EXPRESSION_LENGTH = 1000;
