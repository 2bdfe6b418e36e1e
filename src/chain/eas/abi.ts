/**
 * The part of EAS and its SchemaRegistry the project calls, typed for viem: the shapes are the published
 * 1.9.0 artifacts' (struct fields in their order), the errors those calls can revert with so that viem names
 * them. Only the creation code is vendored (`artifacts/`), so check these against the new package's ABI when
 * the version changes (`scripts/vendor-eas.ts`).
 */
import { parseAbi } from "viem";

export const schemaRegistryAbi = parseAbi([
  "struct SchemaRecord { bytes32 uid; address resolver; bool revocable; string schema; }",
  "event Registered(bytes32 indexed uid, address indexed registerer, SchemaRecord schema)",
  "error AlreadyExists()",
  "function register(string schema, address resolver, bool revocable) returns (bytes32)",
  "function getSchema(bytes32 uid) view returns (SchemaRecord)",
]);

export const easAbi = parseAbi([
  "struct AttestationRequestData { address recipient; uint64 expirationTime; bool revocable; bytes32 refUID; bytes data; uint256 value; }",
  "struct AttestationRequest { bytes32 schema; AttestationRequestData data; }",
  "struct Attestation { bytes32 uid; bytes32 schema; uint64 time; uint64 expirationTime; uint64 revocationTime; bytes32 refUID; address recipient; address attester; bool revocable; bytes data; }",
  "event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)",
  "error InvalidSchema()",
  "error InvalidExpirationTime()",
  "error Irrevocable()",
  "error NotFound()",
  "error NotPayable()",
  "error InsufficientValue()",
  "error InvalidAttestation()",
  "function attest(AttestationRequest request) payable returns (bytes32)",
  "function getAttestation(bytes32 uid) view returns (Attestation)",
  "function isAttestationValid(bytes32 uid) view returns (bool)",
]);
