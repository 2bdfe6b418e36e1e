// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/**
 * @title Multicall3 (the batching calls) for the project's devnet
 * @notice Batches calls in one `eth_call`, with Multicall3's ABI and revert reasons at its canonical
 * address 0xcA11bde05977b3631167028862bE2a173976CA11: `tryAggregate` (what the x402 EVM SDK's facilitator
 * reads through), `aggregate3` (what viem's `multicall` uses) and `aggregate`. It lacks the block
 * getters and the value-carrying variants. Stateless, so `anvil_setCode` is all it needs.
 */
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Runs every call; reverts if any fails.
    function aggregate(Call[] calldata calls) external payable returns (uint256 blockNumber, bytes[] memory returnData) {
        blockNumber = block.number;
        returnData = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            bool success;
            (success, returnData[i]) = calls[i].target.call(calls[i].callData);
            require(success, "Multicall3: call failed");
        }
    }

    /// @notice Runs every call; reverts on a failure only when `requireSuccess`.
    function tryAggregate(bool requireSuccess, Call[] calldata calls)
        public
        payable
        returns (Result[] memory returnData)
    {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            Result memory result = returnData[i];
            (result.success, result.returnData) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(result.success, "Multicall3: call failed");
        }
    }

    /// @notice Runs every call; reverts on a failure of a call that does not allow one.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            Result memory result = returnData[i];
            (result.success, result.returnData) = calls[i].target.call(calls[i].callData);
            if (!calls[i].allowFailure) require(result.success, "Multicall3: call failed");
        }
    }
}
