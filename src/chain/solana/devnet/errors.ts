import * as litesvm from "litesvm/dist/internal.js";

/** A transaction error as the RPC prints it (`"AlreadyProcessed"`, `{"InstructionError":[2,{"Custom":1}]}`). */
export type TransactionErrorJson = string | Record<string, unknown>;

type LitesvmError = ReturnType<litesvm.FailedTransactionMetadata["err"]>;

// litesvm's fieldless errors arrive as numbers (its `const enum`s, which exist only in its .d.ts); the RPC
// speaks in their names, listed here in the enums' order.
const TRANSACTION_ERRORS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
];
const INSTRUCTION_ERRORS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
  "BorshIoError",
];

export function transactionErrorJson(error: LitesvmError): TransactionErrorJson {
  if (typeof error === "number") return TRANSACTION_ERRORS[error] ?? `TransactionError${error}`;
  if (error instanceof litesvm.TransactionErrorInstructionError) {
    const inner = error.err();
    let detail: unknown;
    if (typeof inner === "number") detail = INSTRUCTION_ERRORS[inner] ?? `InstructionError${inner}`;
    else if (inner instanceof litesvm.InstructionErrorCustom) detail = { Custom: inner.code };
    else detail = { BorshIoError: (inner as litesvm.InstructionErrorBorshIo).msg };
    return { InstructionError: [error.index, detail] };
  }
  if (error instanceof litesvm.TransactionErrorDuplicateInstruction)
    return { DuplicateInstruction: error.index };
  if (error instanceof litesvm.TransactionErrorInsufficientFundsForRent) {
    return { InsufficientFundsForRent: { account_index: error.accountIndex } };
  }
  return {
    ProgramExecutionTemporarilyRestricted: {
      account_index: (error as { accountIndex: number }).accountIndex,
    },
  };
}

// The validator's own words for the errors a sender meets most (agave's `TransactionError` Display).
const MESSAGES: Record<string, string> = {
  AlreadyProcessed: "This transaction has already been processed",
  BlockhashNotFound: "Blockhash not found",
  AccountNotFound: "Attempt to debit an account but found no record of a prior credit.",
  InsufficientFundsForFee: "Insufficient funds for fee",
  SignatureFailure: "Transaction did not pass signature verification",
  ProgramAccountNotFound: "Attempt to load a program that does not exist",
  InvalidAccountForFee: "This account may not be used to pay transaction fees",
};

/** The message a validator's preflight error carries: "Transaction simulation failed: <this>". */
export function transactionErrorMessage(error: TransactionErrorJson): string {
  if (typeof error === "string") return MESSAGES[error] ?? error;
  const instruction = error.InstructionError as [number, unknown] | undefined;
  if (instruction) {
    const [index, detail] = instruction;
    if (detail && typeof detail === "object" && "Custom" in detail) {
      return `Error processing Instruction ${index}: custom program error: 0x${(detail as { Custom: number }).Custom.toString(16)}`;
    }
    return `Error processing Instruction ${index}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`;
  }
  return JSON.stringify(error);
}
