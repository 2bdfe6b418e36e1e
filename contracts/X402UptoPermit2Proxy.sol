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
 * @title x402 `upto` Permit2 proxy for the project's devnet
 * @notice The spender of x402 `upto` Permit2 signatures, with the ABI `@x402/evm` 2.27 calls at
 * 0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002: the buyer signs a maximum, and the facilitator named in
 * the witness settles any amount up to it, always to the witness's `to`. The witness binds the payee
 * and the facilitator, so no one else can settle and no one can redirect the funds.
 *
 * @dev Installed with `anvil_setCode`, so no constructor runs: Permit2's address is a constant, and
 * the reentrancy lock lives in transient storage (it starts clear in every transaction).
 */
contract X402UptoPermit2Proxy {
    struct Witness {
        address to;
        address facilitator;
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
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH =
        keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    event Settled();
    event SettledWithPermit();

    error AmountExceedsPermitted();
    error InvalidDestination();
    error InvalidOwner();
    error InvalidPermit2Address();
    error PaymentTooEarly();
    error Permit2612AmountMismatch();
    error ReentrancyGuardReentrantCall();
    error UnauthorizedFacilitator();

    bool private transient _entered;

    modifier nonReentrant() {
        if (_entered) revert ReentrancyGuardReentrantCall();
        _entered = true;
        _;
        _entered = false;
    }

    /// @notice Moves `amount` (at most the permitted maximum) from `owner` to `witness.to` through Permit2.
    function settle(
        IPermit2WitnessTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settle(permit, amount, owner, witness, signature);
        emit Settled();
    }

    /**
     * @notice As `settle`, after trying the buyer's EIP-2612 approval of Permit2 (its failure is ignored:
     * the approval may exist already; without it the Permit2 transfer fails).
     */
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        IPermit2WitnessTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (permit2612.value != permit.permitted.amount) revert Permit2612AmountMismatch();
        try IERC20Permit(permit.permitted.token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch {}
        _settle(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settle(
        IPermit2WitnessTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        // The upper bound is Permit2's deadline.
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            IPermit2WitnessTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
