/**
 * A payment's `payment-identifier`, checked as `@x402/extensions` checks it (`extractAndValidatePaymentIdentifier`)
 * with its schema compiled once. The SDK's check compiles the JSON Schema the payment echoes with a new Ajv on
 * every call: about 10 ms of CPU, most of a paid request's own cost on the host (docs/benchmarks-log.md, issue 66
 * item 3), and spent before the payment is verified. The schema a client echoes is the one the route declared
 * (routes.ts: the SDK's own); that one is compiled once, with the SDK's Ajv and options, so its verdicts and
 * messages are the SDK's. Any other schema is the SDK's to compile, as before.
 */
import type { PaymentPayload } from "@x402/core/types";
import {
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
  paymentIdentifierSchema,
  validatePaymentIdentifier,
} from "@x402/extensions/payment-identifier";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

const DECLARED = JSON.stringify(paymentIdentifierSchema);
let declared: ValidateFunction | undefined;

export function checkedPaymentId(
  payload: PaymentPayload,
): ReturnType<typeof extractAndValidatePaymentIdentifier> {
  const extension = payload.extensions?.[PAYMENT_IDENTIFIER] as
    | { schema?: unknown; info?: unknown }
    | undefined;
  if (
    !extension ||
    typeof extension !== "object" ||
    !extension.schema ||
    JSON.stringify(extension.schema) !== DECLARED
  )
    return extractAndValidatePaymentIdentifier(payload);
  // The SDK's checks of the id itself, all but its schema's, then the declared schema as the SDK runs it.
  const checked = validatePaymentIdentifier({ ...extension, schema: undefined });
  if (!checked.valid) return { id: null, validation: checked };
  declared ??= new Ajv2020({ strict: false, allErrors: true }).compile(paymentIdentifierSchema);
  const validate = declared;
  if (!validate(extension.info) && validate.errors) {
    const errors = validate.errors.map((err) => `${err.instancePath || "(root)"}: ${err.message}`);
    return { id: null, validation: { valid: false, errors } };
  }
  return { id: (extension.info as { id?: string }).id ?? null, validation: { valid: true } };
}
