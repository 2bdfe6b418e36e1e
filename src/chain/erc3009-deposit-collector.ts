/**
 * The devnet's ERC-3009 deposit collector of x402's `batch-settlement` escrow
 * (`contracts/ERC3009DepositCollector.sol`): its ABI typed for viem and its compiled code.
 * `test/chain/artifact.test.ts` checks the ABI is exactly the compiled one.
 */
import { type Hex, parseAbi } from "viem";
import artifact from "./erc3009-deposit-collector.artifact.json" with { type: "json" };

export const erc3009DepositCollectorAbi = parseAbi([
  "error InvalidX402BatchSettlementAddress()",
  "error OnlyX402BatchSettlement()",
  "error SafeERC20FailedOperation(address token)",
  "function x402BatchSettlement() view returns (address)",
  "function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes collectorData)",
]);

/** What `anvil_setCode` installs at the canonical address; it needs no constructor and no storage. */
export const ERC3009_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE = artifact.deployedBytecode as Hex;
