export { AnswerStore } from "./answer-store.ts";
export {
  BUILDER_CODE_PATTERN,
  declareBuilderCode,
  defaultBuilderCode,
  NO_BUILDER_CODE,
  readBuilderCode,
} from "./builder-code.ts";
export { PaymentIdSettingsSchema, paymentIdsSetting, readPaymentIds } from "./payment-id-settings.ts";
export { answerOnce, claimPaymentId, REPLAYED_HEADER, withPaymentIds } from "./payment-ids.ts";
export {
  ACCESS_CALLS_HEADER,
  ACCESS_UNTIL_HEADER,
  accessForPeriod,
  declareSignIn,
  periodAccess,
  SIGN_IN_HEADER,
  signInExtension,
} from "./siwx.ts";
