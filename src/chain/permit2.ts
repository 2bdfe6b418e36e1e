/**
 * The devnet's Permit2 (`contracts/Permit2.sol`, signature transfers only): its ABI typed for viem and its
 * compiled code. `test/chain/artifact.test.ts` checks the ABI below is exactly the compiled one.
 */
import { type Hex, parseAbi } from "viem";
import artifact from "./permit2.artifact.json" with { type: "json" };

/** Permit2's interface as far as x402 uses it, in Solidity's own words. */
export const permit2Abi = parseAbi([
  "struct TokenPermissions { address token; uint256 amount; }",
  "struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }",
  "struct SignatureTransferDetails { address to; uint256 requestedAmount; }",
  "event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask)",
  "error SignatureExpired(uint256 signatureDeadline)",
  "error InvalidAmount(uint256 maxAmount)",
  "error InvalidNonce()",
  "error InvalidSignature()",
  "error InvalidSignatureLength()",
  "error InvalidSigner()",
  "error InvalidContractSignature()",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function TOKEN_PERMISSIONS_TYPEHASH() view returns (bytes32)",
  "function PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB() view returns (string)",
  "function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)",
  "function invalidateUnorderedNonces(uint256 wordPos, uint256 mask)",
  "function permitWitnessTransferFrom(PermitTransferFrom permit, SignatureTransferDetails transferDetails, address owner, bytes32 witness, string witnessTypeString, bytes signature)",
]);

/** What `anvil_setCode` installs at the canonical address; it needs no constructor and no storage. */
export const PERMIT2_RUNTIME_BYTECODE = artifact.deployedBytecode as Hex;
/** Storage slot of the `nonceBitmap` mapping. */
export const PERMIT2_NONCE_BITMAP_SLOT = 0;
