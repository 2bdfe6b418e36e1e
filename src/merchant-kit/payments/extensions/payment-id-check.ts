/**
 * A payment's `payment-identifier`, checked as `@x402/extensions` checks it (`extractAndValidatePaymentIdentifier`)
 * but against the schema the route declared, compiled once, never against a schema the payment carries.
 *
 * The SDK compiles the JSON Schema the payment echoes with a new Ajv on every call, before the payment is
 * verified, so whoever sends a request writes code the host runs: a `pattern` that backtracks (`^(a+)+$`
 * against thirty `a`s and a `!` in `info`; each two more quadruple it) held the host's event loop for 17 s, one
 * unpaid request, and a schema of 900 properties cost 2 s to compile (issue 83). The echo is the route's
 * declaration sent back (routes.ts: the SDK's own `paymentIdentifierSchema`), and what binds the payment is the
 * declaration: a client that echoes it gets the SDK's verdict, id and messages (its checks of the id, then the
 * declared schema with the SDK's Ajv and options); one that echoes another schema, or none, gets the verdict the
 * declared schema gives. The compilation once is also what it costs: about 10 ms of CPU a paid request
 * (docs/benchmarks-log.md, issue 66 item 3).
 */
import type { PaymentPayload } from "@x402/core/types";
import {
  type extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
  paymentIdentifierSchema,
  validatePaymentIdentifier,
} from "@x402/extensions/payment-identifier";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

let declared: ValidateFunction | undefined;

export function checkedPaymentId(
  payload: PaymentPayload,
): ReturnType<typeof extractAndValidatePaymentIdentifier> {
  const extension: unknown = payload.extensions?.[PAYMENT_IDENTIFIER];
  // As the SDK: an extension that is absent (or null, false, "") carries no id.
  if (!extension) return { id: null, validation: { valid: true } };
  // The SDK's checks of the id itself, with the payment's schema left out (it would compile it).
  const own = typeof extension === "object" && !Array.isArray(extension);
  const checked = validatePaymentIdentifier(own ? { ...extension, schema: undefined } : extension);
  if (!checked.valid) return { id: null, validation: checked };
  const { info } = extension as { info: { id?: string } };
  declared ??= new Ajv2020({ strict: false, allErrors: true }).compile(paymentIdentifierSchema);
  const validate = declared;
  if (!validate(info) && validate.errors) {
    const errors = validate.errors.map((err) => `${err.instancePath || "(root)"}: ${err.message}`);
    return { id: null, validation: { valid: false, errors } };
  }
  return { id: info.id ?? null, validation: { valid: true } };
}
