/**
 * The devnet's Permit2 deposit collector of x402's `batch-settlement` escrow
 * (`contracts/Permit2DepositCollector.sol`): its ABI typed for viem and its compiled code.
 * `test/chain/artifact.test.ts` checks the ABI is exactly the compiled one.
 */
import { type Hex, parseAbi } from "viem";
import artifact from "./permit2-deposit-collector.artifact.json" with { type: "json" };

export const permit2DepositCollectorAbi = parseAbi([
  "event EIP2612PermitFailedWithReason(address indexed token, address indexed owner, string reason)",
  "event EIP2612PermitFailedWithPanic(address indexed token, address indexed owner, uint256 errorCode)",
  "event EIP2612PermitFailedWithData(address indexed token, address indexed owner, bytes data)",
  "error InvalidPermit2Address()",
  "error InvalidX402BatchSettlementAddress()",
  "error OnlyX402BatchSettlement()",
  "error Permit2612AmountMismatch()",
  "function PERMIT2() view returns (address)",
  "function x402BatchSettlement() view returns (address)",
  "function DEPOSIT_WITNESS_TYPE_STRING() view returns (string)",
  "function DEPOSIT_WITNESS_TYPEHASH() view returns (bytes32)",
  "function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes collectorData)",
]);

/** What `anvil_setCode` installs at the canonical address; it needs no constructor and no storage. */
export const PERMIT2_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE = artifact.deployedBytecode as Hex;
