// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/**
 * @title Permit2 (signature transfers only) for the project's devnet
 * @notice The part of Uniswap's Permit2 that x402's `upto` (and Permit2 `exact`) scheme uses, with the
 * same EIP-712 domain (name "Permit2", chain id, this address; no version), the same type strings,
 * the same unordered nonce bitmap and the same errors, so signatures made for Base verify here:
 * `permitWitnessTransferFrom` for one token, `nonceBitmap`, `invalidateUnorderedNonces`, `DOMAIN_SEPARATOR`.
 * It lacks batch transfers, the witness-less `permitTransferFrom` and the AllowanceTransfer half.
 *
 * @dev Installed with `anvil_setCode` at the canonical address, so no constructor runs: the domain
 * separator is computed per call from `block.chainid` and `address(this)`, and all state (the nonce
 * bitmap, slot 0) starts empty, as it should.
 */
contract Permit2 {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    /// @notice owner => word position => bitmap of used nonces (nonce = wordPos << 8 | bitPos). Slot 0.
    mapping(address owner => mapping(uint256 wordPos => uint256)) public nonceBitmap;

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error InvalidSignature();
    error InvalidSignatureLength();
    error InvalidSigner();
    error InvalidContractSignature();

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");
    bytes32 public constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    /// @dev The witness's own type string (from the spender) completes this stub, as in Permit2.
    string public constant PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    /// @notice Computed per call: the code runs where no constructor could have cached it.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }

    /**
     * @notice Moves `transferDetails.requestedAmount` (at most `permit.permitted.amount`) of the token from
     * `owner` to `transferDetails.to`, if `owner` signed this permit for `msg.sender` with this witness.
     * Spends the nonce even when the amount is 0, as Permit2 does.
     */
    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        uint256 maxAmount = permit.permitted.amount;
        if (transferDetails.requestedAmount > maxAmount) revert InvalidAmount(maxAmount);

        bytes32 typeHash = keccak256(abi.encodePacked(PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB, witnessTypeString));
        bytes32 tokenPermissionsHash =
            keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permit.permitted.token, maxAmount));
        bytes32 structHash = keccak256(
            abi.encode(typeHash, tokenPermissionsHash, msg.sender, permit.nonce, permit.deadline, witness)
        );
        _useUnorderedNonce(owner, permit.nonce);
        _verify(signature, keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash)), owner);
        _transferFrom(permit.permitted.token, owner, transferDetails.to, transferDetails.requestedAmount);
    }

    /// @notice Marks the nonces set in `mask` of word `wordPos` as used, so signatures with them cannot be spent.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    function _useUnorderedNonce(address from, uint256 nonce) private {
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = nonceBitmap[from][nonce >> 8] ^= bit;
        if (flipped & bit == 0) revert InvalidNonce();
    }

    /// @dev ECDSA for accounts without code (65-byte or EIP-2098 64-byte signatures), EIP-1271 otherwise.
    function _verify(bytes calldata signature, bytes32 digest, address claimedSigner) private view {
        if (claimedSigner.code.length > 0) {
            (bool ok, bytes memory result) =
                claimedSigner.staticcall(abi.encodeWithSelector(0x1626ba7e, digest, signature));
            if (!ok || result.length < 32 || abi.decode(result, (bytes4)) != bytes4(0x1626ba7e)) {
                revert InvalidContractSignature();
            }
            return;
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (signature.length == 65) {
            (r, s) = abi.decode(signature, (bytes32, bytes32));
            v = uint8(signature[64]);
        } else if (signature.length == 64) {
            bytes32 vs;
            (r, vs) = abi.decode(signature, (bytes32, bytes32));
            s = vs & bytes32(uint256(type(int256).max));
            v = uint8(uint256(vs >> 255)) + 27;
        } else {
            revert InvalidSignatureLength();
        }
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
        if (signer != claimedSigner) revert InvalidSigner();
    }

    /// @dev As solmate's safeTransferFrom, which Permit2 uses: a token that returns nothing counts as success.
    function _transferFrom(address token, address from, address to, uint256 amount) private {
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0x23b872dd, from, to, amount));
        if (!ok || token.code.length == 0 || (data.length > 0 && !abi.decode(data, (bool)))) {
            revert("TRANSFER_FROM_FAILED");
        }
    }
}
