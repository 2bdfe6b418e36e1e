// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @dev The ERC-3009 form the collector calls: the `bytes signature` overload of FiatToken v2.2.
interface IERC3009Receive {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}

/**
 * @title x402 batch-settlement ERC-3009 deposit collector for the project's devnet
 * @notice The collector `@x402/evm` 2.27 names at 0x4020806089470a89826cB9fB1f4059150b550004 for
 * `batch-settlement` deposits signed as ERC-3009 `ReceiveWithAuthorization`: only the escrow
 * (`X402BatchSettlement`) may call `collect`, which receives the payer's signed amount here (ERC-3009's
 * receive form pays only its caller) and passes it on to the escrow. The authorization's nonce is
 * `keccak256(abi.encode(channelId, salt))`, so a signature deposits into one channel only.
 *
 * @dev Installed with `anvil_setCode`, so no constructor runs: the escrow's address is a constant.
 * `InvalidX402BatchSettlementAddress` is declared for the ABI of the deployed collector, whose
 * constructor throws it; nothing here can.
 */
contract ERC3009DepositCollector {
    /// @notice The one caller of `collect`, and where the collected tokens go.
    address public constant x402BatchSettlement = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    error InvalidX402BatchSettlementAddress();
    error OnlyX402BatchSettlement();
    error SafeERC20FailedOperation(address token);

    /**
     * @notice Pulls `amount` of `token` from `payer` with their ERC-3009 authorization and sends it to the
     * escrow. `collectorData` is `abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt,
     * bytes signature)`.
     */
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != x402BatchSettlement) revert OnlyX402BatchSettlement();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        IERC3009Receive(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, keccak256(abi.encode(channelId, salt)), signature
        );
        _transfer(token, x402BatchSettlement, amount);
    }

    /// @dev ERC-20 `transfer` that also accepts a token returning nothing; a revert's reason is passed on.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory returned) = token.call(abi.encodeWithSignature("transfer(address,uint256)", to, amount));
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(returned, 0x20), mload(returned))
            }
        }
        if (returned.length == 0 ? token.code.length == 0 : abi.decode(returned, (uint256)) != 1) {
            revert SafeERC20FailedOperation(token);
        }
    }
}
