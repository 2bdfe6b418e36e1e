/**
 * The devnet's USDC (`contracts/USDC.sol`): its ABI typed for viem and its compiled code.
 * `test/chain/artifact.test.ts` checks the ABI below is exactly the compiled one, and the artifact
 * exactly what the pinned solc makes of the source (`npm run build:contracts` rewrites it).
 */
import { type Hex, parseAbi } from "viem";
import { BASE_RECORD } from "./chains.ts";
import artifact from "./usdc.artifact.json" with { type: "json" };

/** The token's interface, in Solidity's own words (viem's human-readable ABI, fully typed). */
export const usdcAbi = parseAbi([
  "constructor()",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event Approval(address indexed owner, address indexed spender, uint256 value)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event EIP712DomainChanged()",
  "function name() view returns (string)",
  "function symbol() view returns (string)",
  "function version() view returns (string)",
  "function decimals() view returns (uint8)",
  "function owner() view returns (address)",
  "function totalSupply() view returns (uint256)",
  "function balanceOf(address account) view returns (uint256)",
  "function allowance(address holder, address spender) view returns (uint256)",
  "function transfer(address to, uint256 value) returns (bool)",
  "function transferFrom(address from, address to, uint256 value) returns (bool)",
  "function approve(address spender, uint256 value) returns (bool)",
  "function mint(address to, uint256 value) returns (bool)",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function eip712Domain() view returns (bytes1 fields, string domainName, string domainVersion, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
  "function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function CANCEL_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)",
  "function nonces(address owner) view returns (uint256)",
  "function PERMIT_TYPEHASH() view returns (bytes32)",
  "function permit(address holder, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)",
  "function permit(address holder, address spender, uint256 value, uint256 deadline, bytes signature)",
]);

/** What `anvil_setCode` installs at the canonical address (no constructor runs there). */
export const USDC_RUNTIME_BYTECODE = artifact.deployedBytecode as Hex;
/** Creation code, for deploying a copy at a fresh address (the deployer becomes the owner). */
export const USDC_CREATION_BYTECODE = artifact.bytecode as Hex;
export const USDC_SOLC_VERSION = artifact.solcVersion;

/** Storage slot of `owner`, the one account allowed to `mint`; the devnet writes it directly. */
export const USDC_OWNER_SLOT = 0;
/** Storage slot of the `balanceOf` mapping: a balance sits at keccak256(abi.encode(account, 2)). */
export const USDC_BALANCES_SLOT = 2;

/** The EIP-712 domain of USDC on Base, as x402 buyers sign it (name and version from `extra`). */
export const USDC_EIP712_NAME: string = BASE_RECORD.usdc.name;
export const USDC_EIP712_VERSION: string = BASE_RECORD.usdc.version;

/** EIP-3009 message types, as Circle's FiatToken v2 hashes them; for viem's `signTypedData`. */
export const eip3009Types = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
  ReceiveWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/** EIP-2612's message type, as FiatToken v2 hashes it (the owner's approval of a spender, signed). */
export const eip2612Types = {
  Permit: [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;
