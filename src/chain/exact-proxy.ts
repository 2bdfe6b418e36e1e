/**
 * The devnet's x402 `exact` Permit2 proxy (`contracts/X402ExactPermit2Proxy.sol`): its ABI typed for viem and
 * its compiled code. `test/chain/artifact.test.ts` checks the ABI is exactly the compiled one and exactly the
 * SDK's own ABI of the deployed proxy (`@x402/evm`'s `x402ExactPermit2ProxyABI`).
 */
import { type Hex, parseAbi } from "viem";
import artifact from "./exact-proxy.artifact.json" with { type: "json" };

export const exactProxyAbi = parseAbi([
  "struct TokenPermissions { address token; uint256 amount; }",
  "struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }",
  "struct Witness { address to; uint256 validAfter; }",
  "struct EIP2612Permit { uint256 value; uint256 deadline; bytes32 r; bytes32 s; uint8 v; }",
  "event Settled()",
  "event SettledWithPermit()",
  "error InvalidAmount()",
  "error InvalidDestination()",
  "error InvalidOwner()",
  "error InvalidPermit2Address()",
  "error PaymentTooEarly()",
  "error Permit2612AmountMismatch()",
  "error ReentrancyGuardReentrantCall()",
  "function PERMIT2() view returns (address)",
  "function WITNESS_TYPE_STRING() view returns (string)",
  "function WITNESS_TYPEHASH() view returns (bytes32)",
  "function settle(PermitTransferFrom permit, address owner, Witness witness, bytes signature)",
  "function settleWithPermit(EIP2612Permit permit2612, PermitTransferFrom permit, address owner, Witness witness, bytes signature)",
]);

/** What `anvil_setCode` installs at the canonical address; it needs no constructor and no storage. */
export const EXACT_PROXY_RUNTIME_BYTECODE = artifact.deployedBytecode as Hex;
