/**
 * Who may make the facilitator pay gas: the payee allow-list, API keys with their payees, daily gas budget
 * and settlement rate, and the decision, at start, of whether the facilitator is open. See
 * docs/facilitator.md, "Access control".
 */
export {
  type BesideCost,
  besideKey,
  createGasBudgets,
  type GasBudgets,
  type KeyedSettlement,
  KeyOverBudgetError,
} from "./budget.ts";
export { type AccessPolicy, type Admission, createGate, type Gate, type Grant } from "./gate.ts";
export {
  type ApiKey,
  type ApiKeyUsage,
  addKey,
  countLiveKeys,
  KEY_PREFIX,
  listKeys,
  type NewApiKey,
  revokeKey,
} from "./keys.ts";
export { decideOpen, isLoopback, type StartAccess } from "./policy.ts";
