// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @dev The one Permit2 function the collector calls, with Permit2's own struct layouts.
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

/// @dev EIP-2612, which `collect` tries first when the deposit carries a permit.
interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/**
 * @title x402 batch-settlement Permit2 deposit collector for the project's devnet
 * @notice The collector `@x402/evm` 2.27 names at 0x4020425FAf3B746C082C2f942b4E5159887B0005 for
 * `batch-settlement` deposits signed as a Permit2 `PermitWitnessTransferFrom` whose spender is this
 * collector and whose witness is `DepositWitness(bytes32 channelId)`: only the escrow
 * (`X402BatchSettlement`) may call `collect`, and Permit2 moves the payer's tokens straight to the escrow.
 * The witness binds the channel, so a signature deposits into one channel only.
 *
 * `collectorData` is `abi.encode(uint256 nonce, uint256 deadline, bytes permit2Signature,
 * bytes eip2612Permit)`; a non-empty `eip2612Permit` is `abi.encode(uint256 value, uint256 deadline,
 * uint8 v, bytes32 r, bytes32 s)`, the payer's EIP-2612 approval of Permit2, tried first (a failure is
 * logged and the deposit goes on: the approval may exist already; without it the transfer fails).
 *
 * @dev Installed with `anvil_setCode`, so no constructor runs: the escrow's and Permit2's addresses are
 * constants. The constructor errors of the deployed collector are declared for its ABI; nothing here
 * throws them.
 */
contract Permit2DepositCollector {
    /// @notice Canonical Permit2 (the same address on every chain).
    IPermit2WitnessTransfer public constant PERMIT2 =
        IPermit2WitnessTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// @notice The one caller of `collect`, and where the collected tokens go.
    address public constant x402BatchSettlement = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    /// @notice Completes Permit2's `PermitWitnessTransferFrom(...,` stub; the referenced types in
    /// alphabetical order, exactly as the SDK's EIP-712 types hash them.
    string public constant DEPOSIT_WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";
    bytes32 public constant DEPOSIT_WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");

    event EIP2612PermitFailedWithReason(address indexed token, address indexed owner, string reason);
    event EIP2612PermitFailedWithPanic(address indexed token, address indexed owner, uint256 errorCode);
    event EIP2612PermitFailedWithData(address indexed token, address indexed owner, bytes data);

    error InvalidPermit2Address();
    error InvalidX402BatchSettlementAddress();
    error OnlyX402BatchSettlement();
    error Permit2612AmountMismatch();

    /// @notice Moves `amount` of `token` from `payer` to the escrow with their Permit2 signature.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != x402BatchSettlement) revert OnlyX402BatchSettlement();
        (uint256 nonce, uint256 deadline, bytes memory signature, bytes memory eip2612Permit) =
            abi.decode(collectorData, (uint256, uint256, bytes, bytes));
        if (eip2612Permit.length != 0) _tryPermit(payer, token, amount, eip2612Permit);
        PERMIT2.permitWitnessTransferFrom(
            IPermit2WitnessTransfer.PermitTransferFrom({
                permitted: IPermit2WitnessTransfer.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            IPermit2WitnessTransfer.SignatureTransferDetails({to: x402BatchSettlement, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(DEPOSIT_WITNESS_TYPEHASH, channelId)),
            DEPOSIT_WITNESS_TYPE_STRING,
            signature
        );
    }

    function _tryPermit(address payer, address token, uint256 amount, bytes memory eip2612Permit) private {
        (uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) =
            abi.decode(eip2612Permit, (uint256, uint256, uint8, bytes32, bytes32));
        if (value != amount) revert Permit2612AmountMismatch();
        try IERC20Permit(token).permit(payer, address(PERMIT2), value, deadline, v, r, s) {}
        catch Error(string memory reason) {
            emit EIP2612PermitFailedWithReason(token, payer, reason);
        } catch Panic(uint256 errorCode) {
            emit EIP2612PermitFailedWithPanic(token, payer, errorCode);
        } catch (bytes memory data) {
            emit EIP2612PermitFailedWithData(token, payer, data);
        }
    }
}
