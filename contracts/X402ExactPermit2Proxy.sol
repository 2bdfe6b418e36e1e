// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @dev The one Permit2 function the proxy calls, with Permit2's own struct layouts.
interface IPermit2WitnessTransfer {
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

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

/// @dev EIP-2612, which `settleWithPermit` tries before settling.
interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/**
 * @title x402 `exact` Permit2 proxy for the project's devnet
 * @notice The spender of x402 `exact` Permit2 signatures, with the ABI `@x402/evm` 2.27 calls at
 * 0x402085c248EeA27D92E8b30b2C58ed07f9E20001 (for tokens without EIP-3009, or a buyer who chose Permit2):
 * anyone may submit the buyer's signature, and the proxy moves exactly the signed amount to the
 * witness's `to`, never before the witness's `validAfter` (Permit2 enforces the deadline and the
 * nonce). The witness binds the payee, so whoever submits cannot redirect the funds.
 *
 * @dev Installed with `anvil_setCode`, so no constructor runs: Permit2's address is a constant, and
 * the reentrancy lock lives in transient storage (it starts clear in every transaction). A failed
 * EIP-2612 permit in `settleWithPermit` is ignored without a log: the SDK's ABI of the proxy has no
 * event for it, and the transfer that follows fails anyway when the approval is missing.
 */
contract X402ExactPermit2Proxy {
    struct Witness {
        address to;
        uint256 validAfter;
    }

    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    /// @notice Canonical Permit2 (the same address on every chain).
    IPermit2WitnessTransfer public constant PERMIT2 =
        IPermit2WitnessTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// @notice Completes Permit2's `PermitWitnessTransferFrom(...,` stub; the referenced types in
    /// alphabetical order, exactly as the SDK's EIP-712 types hash them.
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,uint256 validAfter)");

    event Settled();
    event SettledWithPermit();

    error InvalidAmount();
    error InvalidDestination();
    error InvalidOwner();
    error InvalidPermit2Address();
    error PaymentTooEarly();
    error Permit2612AmountMismatch();
    error ReentrancyGuardReentrantCall();

    bool private transient _entered;

    modifier nonReentrant() {
        if (_entered) revert ReentrancyGuardReentrantCall();
        _entered = true;
        _;
        _entered = false;
    }

    /// @notice Moves the whole permitted amount from `owner` to `witness.to` through Permit2.
    function settle(
        IPermit2WitnessTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settle(permit, owner, witness, signature);
        emit Settled();
    }

    /**
     * @notice As `settle`, after trying the buyer's EIP-2612 approval of Permit2 for exactly the permitted
     * amount (its failure is ignored: the approval may exist already; without it the transfer fails).
     */
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        IPermit2WitnessTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (permit2612.value != permit.permitted.amount) revert Permit2612AmountMismatch();
        try IERC20Permit(permit.permitted.token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch {}
        _settle(permit, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settle(
        IPermit2WitnessTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        uint256 amount = permit.permitted.amount;
        if (amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        // The upper bound is Permit2's deadline.
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        PERMIT2.permitWitnessTransferFrom(
            permit,
            IPermit2WitnessTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.validAfter)),
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
