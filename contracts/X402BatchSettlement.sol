// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @dev What a deposit collector does for `deposit`: pulls the payer's tokens into the escrow.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external;
}

/// @dev The two ERC-20 functions the escrow calls.
interface IERC20Balance {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
}

/// @dev ERC-1271: how a contract account says a signature is its own.
interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4);
}

/**
 * @title x402 batch-settlement escrow for the project's devnet
 * @notice x402's stateless unidirectional payment channels, as `@x402/evm` 2.27 uses them at
 * 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003 (the same ABI, events, errors and EIP-712 hashes). A
 * payer deposits into a channel (an immutable `ChannelConfig`, whose EIP-712 hash is the channel id)
 * through a deposit collector; pays by signing vouchers, each a cumulative ceiling; the receiver side
 * (`receiver` or `receiverAuthorizer`, or anyone holding the authorizer's signature) claims up to a
 * voucher's ceiling and `settle` pays the claimed money to the receiver. Unclaimed money goes back to
 * the payer by a cooperative refund or, after the channel's `withdrawDelay`, a withdrawal the payer
 * started.
 *
 * A voucher of a channel with a `payerAuthorizer` must be that key's ECDSA signature; without one, the
 * payer's (ECDSA, or ERC-1271 for a contract account). Claims are cumulative: a claim not above the
 * channel's `totalClaimed` does nothing, so replaying one is harmless. Every refund bumps the channel's
 * refund nonce first, which retires any refund signature made for the old nonce.
 *
 * @dev Installed with `anvil_setCode`, so no constructor runs: the EIP-712 domain ("x402 Batch
 * Settlement", "1", `block.chainid`, `address(this)`) is computed per call, and the reentrancy lock lives
 * in transient storage (it starts clear in every transaction). A deposit trusts no collector: the
 * escrow's own token balance must grow by exactly the amount. Signatures are 65 bytes; an ECDSA `s` in
 * the upper half of the curve order (the malleable twin of a valid signature) is refused.
 */
contract X402BatchSettlement {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct WithdrawalState {
        uint128 amount;
        /// @dev When the payer started the withdrawal; 0 when none is pending.
        uint40 initiatedAt;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        /// @dev Cumulative, not a delta.
        uint128 totalClaimed;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    string private constant _NAME = "x402 Batch Settlement";
    string private constant _VERSION = "1";
    bytes32 private constant _DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    /// @dev secp256k1n / 2 (EIP-2).
    uint256 private constant _HALF_CURVE_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    mapping(bytes32 channelId => ChannelState) public channels;
    /// @dev Bumped by every refund, direct or signed, before its amount is applied.
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(bytes32 channelId => WithdrawalState) public pendingWithdrawals;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    bool private transient _entered;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);
    /// @dev EIP-5267's event; the domain never changes, so it is never emitted.
    event EIP712DomainChanged();

    error ClaimExceedsBalance();
    error ClaimExceedsCeiling();
    error DepositCollectionFailed();
    error DepositOverflow();
    error ECDSAInvalidSignature();
    error ECDSAInvalidSignatureLength(uint256 length);
    error ECDSAInvalidSignatureS(bytes32 s);
    error EmptyBatch();
    error FailedCall();
    error InvalidChannel();
    error InvalidCollector();
    error InvalidRefundNonce();
    error InvalidSignature();
    error NotAuthorizedToClaim();
    error NotAuthorizedToFinalizeWithdraw();
    error NotAuthorizedToRefund();
    error NotReceiverAuthorizer();
    error NothingToWithdraw();
    error ReentrancyGuardReentrantCall();
    error SafeERC20FailedOperation(address token);
    error WithdrawAmountExceedsAvailable();
    error WithdrawDelayNotElapsed();
    error WithdrawDelayOutOfRange();
    error WithdrawalAlreadyPending();
    error WithdrawalNotPending();
    error ZeroDeposit();
    error ZeroRefund();

    /// @dev Why a signature did not recover (ECDSA only).
    enum Recovery {
        Ok,
        BadLength,
        HighS,
        NoSigner
    }

    modifier nonReentrant() {
        if (_entered) revert ReentrancyGuardReentrantCall();
        _entered = true;
        _;
        _entered = false;
    }

    // ------------------------------------------------------------------------------------- deposits

    /**
     * @notice Adds `amount` to the channel's escrow, pulled from its payer by `collector` (the collector's
     * authorization, e.g. a signature, is in `collectorData`). Emits `ChannelCreated` first when the
     * channel held nothing and had no claims.
     */
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0)) revert InvalidCollector();

        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 previous = channel.balance;
        if (amount > type(uint128).max - previous) revert DepositOverflow();
        channel.balance = previous + amount;

        IERC20Balance token = IERC20Balance(config.token);
        uint256 held = token.balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (token.balanceOf(address(this)) != held + amount) revert DepositCollectionFailed();

        if (previous == 0 && channel.totalClaimed == 0) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, previous + amount);
    }

    // ------------------------------------------------------------------------------ claims, settling

    /// @notice Applies voucher claims sent by each channel's `receiver` or `receiverAuthorizer`.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyBatch();
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            if (!_isReceiverSide(voucherClaims[i].voucher.channel)) revert NotAuthorizedToClaim();
            _applyClaim(voucherClaims[i]);
        }
    }

    /**
     * @notice Applies voucher claims whose channels share one `receiverAuthorizer`, who signed
     * `getClaimBatchDigest(voucherClaims)`; anyone may send it.
     */
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        if (!_isValidSignatureNow(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert NotReceiverAuthorizer();
            _applyClaim(voucherClaims[i]);
        }
    }

    /// @notice Pays `receiver` everything claimed for it in `token` and not paid yet; anyone may send it.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage state = receivers[receiver][token];
        uint128 amount = state.totalClaimed - state.totalSettled;
        if (amount == 0) return;
        state.totalSettled = state.totalClaimed;
        _transfer(token, receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ------------------------------------------------------------------------------------ withdrawal

    /**
     * @notice Starts the payer's withdrawal of up to `amount` of the unclaimed escrow, which
     * `finalizeWithdraw` completes `withdrawDelay` seconds later. Only the payer or its authorizer.
     */
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert InvalidChannel();
        if (amount == 0) revert NothingToWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt != 0) revert WithdrawalAlreadyPending();
        ChannelState storage channel = channels[channelId];
        if (amount > channel.balance - channel.totalClaimed) revert WithdrawAmountExceedsAvailable();
        uint40 now_ = uint40(block.timestamp);
        withdrawal.amount = amount;
        withdrawal.initiatedAt = now_;
        emit WithdrawInitiated(channelId, amount, now_ + config.withdrawDelay);
    }

    /**
     * @notice Sends the pending withdrawal to the payer once its delay has passed: at most what is still
     * unclaimed then. Only the payer or its authorizer.
     */
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) {
            revert NotAuthorizedToFinalizeWithdraw();
        }
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        uint256 initiatedAt = withdrawal.initiatedAt;
        if (initiatedAt == 0) revert WithdrawalNotPending();
        if (block.timestamp < initiatedAt + config.withdrawDelay) revert WithdrawDelayNotElapsed();

        ChannelState storage channel = channels[channelId];
        uint128 amount = _min(withdrawal.amount, channel.balance - channel.totalClaimed);
        delete pendingWithdrawals[channelId];
        channel.balance -= amount;
        emit WithdrawFinalized(channelId, msg.sender, amount);
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
        if (amount != 0) _transfer(config.token, config.payer, amount);
    }

    // --------------------------------------------------------------------------------------- refunds

    /// @notice Returns up to `amount` of the unclaimed escrow to the payer. Only the receiver side.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (!_isReceiverSide(config)) revert NotAuthorizedToRefund();
        _refund(config, amount);
    }

    /**
     * @notice As `refund`, with the `receiverAuthorizer`'s signature of `getRefundDigest` for the channel's
     * current refund nonce; anyone may send it.
     */
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        if (!_isValidSignatureNow(
                config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
            )) revert InvalidSignature();
        _refund(config, amount);
    }

    // ------------------------------------------------------------------------------ views, EIP-712

    /// @notice The channel id: the EIP-712 hash of `config` in this contract's domain.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _hashTypedData(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    /// @notice What the payer (or its authorizer) signs for a voucher.
    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTypedData(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    /// @notice What the receiver's authorizer signs for `refundWithSignature`.
    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTypedData(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice What the receiver's authorizer signs for `claimWithSignature` (defined for an empty batch too).
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            VoucherClaim calldata entry = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(entry.voucher.channel),
                    entry.voucher.maxClaimableAmount,
                    entry.totalClaimed
                )
            );
        }
        return _hashTypedData(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    /// @notice EIP-5267: name, version, chain id and verifying contract are set (0x0f); no salt, no extensions.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", _NAME, _VERSION, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ------------------------------------------------------------------------------------ multicall

    /// @notice Runs each call on this contract in order, in one transaction; any failure reverts them all.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; ++i) {
            (bool ok, bytes memory returned) = address(this).delegatecall(data[i]);
            if (!ok) {
                if (returned.length == 0) revert FailedCall();
                _bubble(returned);
            }
            results[i] = returned;
        }
    }

    // ------------------------------------------------------------------------------------- internals

    function _isReceiverSide(ChannelConfig calldata config) private view returns (bool) {
        return msg.sender == config.receiver || msg.sender == config.receiverAuthorizer;
    }

    /// @dev Raises the channel's `totalClaimed` to the claim's, once the voucher's signature is checked.
    function _applyClaim(VoucherClaim calldata voucherClaim) private {
        ChannelConfig calldata config = voucherClaim.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 total = voucherClaim.totalClaimed;
        uint128 claimed = channel.totalClaimed;
        if (total <= claimed) return;
        uint128 ceiling = voucherClaim.voucher.maxClaimableAmount;
        if (total > ceiling) revert ClaimExceedsCeiling();
        if (total > channel.balance) revert ClaimExceedsBalance();

        bytes32 digest = getVoucherDigest(channelId, ceiling);
        if (config.payerAuthorizer != address(0)) {
            if (_recoverOrRevert(digest, voucherClaim.signature) != config.payerAuthorizer) revert InvalidSignature();
        } else if (!_isValidSignatureNow(config.payer, digest, voucherClaim.signature)) {
            revert InvalidSignature();
        }

        uint128 delta = total - claimed;
        channel.totalClaimed = total;
        receivers[config.receiver][config.token].totalClaimed += delta;
        emit Claimed(channelId, msg.sender, delta, total);
    }

    /// @dev Bumps the refund nonce, then returns at most the unclaimed escrow and shrinks a pending withdrawal.
    function _refund(ChannelConfig calldata config, uint128 amount) private {
        if (amount == 0) revert ZeroRefund();
        bytes32 channelId = getChannelId(config);
        unchecked {
            ++refundNonce[channelId];
        }
        ChannelState storage channel = channels[channelId];
        uint128 refunded = _min(amount, channel.balance - channel.totalClaimed);
        if (refunded == 0) return;
        channel.balance -= refunded;

        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt != 0) {
            if (refunded >= withdrawal.amount) delete pendingWithdrawals[channelId];
            else withdrawal.amount -= refunded;
        }

        emit Refunded(channelId, msg.sender, refunded);
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
        _transfer(config.token, config.payer, refunded);
    }

    function _hashTypedData(bytes32 structHash) private view returns (bytes32) {
        bytes32 domainSeparator = keccak256(
            abi.encode(_DOMAIN_TYPEHASH, keccak256(bytes(_NAME)), keccak256(bytes(_VERSION)), block.chainid, address(this))
        );
        return keccak256(abi.encodePacked(hex"1901", domainSeparator, structHash));
    }

    /// @dev `signer`'s signature of `digest`: ECDSA for an account without code, ERC-1271 for a contract.
    function _isValidSignatureNow(address signer, bytes32 digest, bytes calldata signature)
        private
        view
        returns (bool)
    {
        if (signer.code.length == 0) {
            (address recovered, Recovery recovery,) = _recover(digest, signature);
            return recovery == Recovery.Ok && recovered == signer;
        }
        (bool ok, bytes memory returned) =
            signer.staticcall(abi.encodeCall(IERC1271.isValidSignature, (digest, signature)));
        return ok && returned.length >= 32
            && abi.decode(returned, (bytes32)) == bytes32(IERC1271.isValidSignature.selector);
    }

    /// @dev The ECDSA signer of `digest`; reverts with the reason when there is none.
    function _recoverOrRevert(bytes32 digest, bytes calldata signature) private pure returns (address) {
        (address recovered, Recovery recovery, bytes32 detail) = _recover(digest, signature);
        if (recovery == Recovery.BadLength) revert ECDSAInvalidSignatureLength(uint256(detail));
        if (recovery == Recovery.HighS) revert ECDSAInvalidSignatureS(detail);
        if (recovery == Recovery.NoSigner) revert ECDSAInvalidSignature();
        return recovered;
    }

    /// @dev A 65-byte `r ‖ s ‖ v` signature's signer, or why there is none (with the length or the `s`).
    function _recover(bytes32 digest, bytes calldata signature)
        private
        pure
        returns (address recovered, Recovery recovery, bytes32 detail)
    {
        if (signature.length != 65) return (address(0), Recovery.BadLength, bytes32(signature.length));
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > _HALF_CURVE_ORDER) return (address(0), Recovery.HighS, s);
        recovered = ecrecover(digest, v, r, s);
        if (recovered == address(0)) return (address(0), Recovery.NoSigner, bytes32(0));
        return (recovered, Recovery.Ok, bytes32(0));
    }

    /// @dev ERC-20 `transfer` that also accepts a token returning nothing; a revert's reason is passed on.
    function _transfer(address token, address to, uint128 amount) private {
        (bool ok, bytes memory returned) = token.call(abi.encodeCall(IERC20Balance.transfer, (to, amount)));
        if (!ok) _bubble(returned);
        if (returned.length == 0 ? token.code.length == 0 : abi.decode(returned, (uint256)) != 1) {
            revert SafeERC20FailedOperation(token);
        }
    }

    /// @dev Reverts with a failed call's own revert data.
    function _bubble(bytes memory returned) private pure {
        assembly ("memory-safe") {
            revert(add(returned, 0x20), mload(returned))
        }
    }

    function _min(uint128 a, uint128 b) private pure returns (uint128) {
        return a < b ? a : b;
    }
}
