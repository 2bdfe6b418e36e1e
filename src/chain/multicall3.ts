/**
 * The devnet's Multicall3 (`contracts/Multicall3.sol`, the batching calls only): its ABI typed for viem
 * and its compiled code. `test/chain/artifact.test.ts` checks the ABI is exactly the compiled one.
 */
import { type Hex, parseAbi } from "viem";
import artifact from "./multicall3.artifact.json" with { type: "json" };

export const multicall3Abi = parseAbi([
  "struct Call { address target; bytes callData; }",
  "struct Call3 { address target; bool allowFailure; bytes callData; }",
  "struct Result { bool success; bytes returnData; }",
  "function aggregate(Call[] calls) payable returns (uint256 blockNumber, bytes[] returnData)",
  "function tryAggregate(bool requireSuccess, Call[] calls) payable returns (Result[] returnData)",
  "function aggregate3(Call3[] calls) payable returns (Result[] returnData)",
]);

/** What `anvil_setCode` installs at the canonical address; stateless, so that is all. */
export const MULTICALL3_RUNTIME_BYTECODE = artifact.deployedBytecode as Hex;
