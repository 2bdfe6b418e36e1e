// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/**
 * @title Stand-ins for Circle's CCTP contracts on the project's devnet (test/helpers/cctp.ts)
 * @notice They move USDC and log events exactly as Circle's TokenMessenger, MessageTransmitter and their v2
 * (circlefin/evm-cctp-contracts) do for a burn and a mint: the same event signatures, the same packed messages
 * and burn bodies, the same order of logs in a transaction. They lack what the indexer never sees: attestation
 * signatures (the test plays Circle's attesters and hands the message over as is), pausing, denylists, fee
 * minimums, hooks' execution. The devnet's USDC has no `burn`, so the minter keeps what a burn takes.
 */
interface IDevnetUsdc {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function mint(address to, uint256 value) external returns (bool);
}

/// The token's owner (its only minter), which mints for the messengers and holds what they burn.
contract CctpTokenMinter {
    address public immutable admin;
    mapping(address => bool) public messengers;

    constructor() {
        admin = msg.sender;
    }

    function addMessenger(address messenger) external {
        require(msg.sender == admin, "not admin");
        messengers[messenger] = true;
    }

    function mint(address token, address to, uint256 amount) external {
        require(messengers[msg.sender], "not a messenger");
        require(IDevnetUsdc(token).mint(to, amount), "mint failed");
    }
}

function toBytes32(address a) pure returns (bytes32) {
    return bytes32(uint256(uint160(a)));
}

function toAddress(bytes32 b) pure returns (address) {
    return address(uint160(uint256(b)));
}

/// CCTP v1's MessageTransmitter: sequential nonces of 8 bytes, counted here.
contract CctpMessageTransmitterV1 {
    event MessageSent(bytes message);
    event MessageReceived(
        address indexed caller, uint32 sourceDomain, uint64 indexed nonce, bytes32 sender, bytes messageBody
    );

    uint32 public immutable localDomain;
    uint64 public nextAvailableNonce;
    mapping(bytes32 => bool) public usedNonces;

    constructor(uint32 domain) {
        localDomain = domain;
    }

    function sendMessage(uint32 destinationDomain, bytes32 recipient, bytes calldata messageBody)
        external
        returns (uint64 nonce)
    {
        nonce = nextAvailableNonce++;
        emit MessageSent(
            abi.encodePacked(
                uint32(0), localDomain, destinationDomain, nonce, toBytes32(msg.sender), recipient, bytes32(0), messageBody
            )
        );
    }

    function receiveMessage(bytes calldata message, bytes calldata) external returns (bool) {
        require(uint32(bytes4(message[8:12])) == localDomain, "Invalid destination domain");
        uint32 source = uint32(bytes4(message[4:8]));
        uint64 nonce = uint64(bytes8(message[12:20]));
        bytes32 key = keccak256(abi.encodePacked(source, nonce));
        require(!usedNonces[key], "Nonce already used");
        usedNonces[key] = true;
        bytes32 sender = bytes32(message[20:52]);
        bytes calldata body = message[116:];
        require(
            CctpTokenMessengerV1(toAddress(bytes32(message[52:84]))).handleReceiveMessage(source, sender, body),
            "handleReceiveMessage() failed"
        );
        emit MessageReceived(msg.sender, source, nonce, sender, body);
        return true;
    }
}

/// CCTP v1's TokenMessenger.
contract CctpTokenMessengerV1 {
    event DepositForBurn(
        uint64 indexed nonce,
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken);

    CctpMessageTransmitterV1 public immutable transmitter;
    CctpTokenMinter public immutable minter;
    address public immutable token;
    mapping(uint32 => bytes32) public remoteTokenMessengers;

    constructor(CctpMessageTransmitterV1 transmitter_, CctpTokenMinter minter_, address token_) {
        transmitter = transmitter_;
        minter = minter_;
        token = token_;
    }

    function addRemoteTokenMessenger(uint32 domain, bytes32 messenger) external {
        remoteTokenMessengers[domain] = messenger;
    }

    function depositForBurn(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken)
        external
        returns (uint64 nonce)
    {
        bytes32 remote = remoteTokenMessengers[destinationDomain];
        require(remote != bytes32(0), "No TokenMessenger for domain");
        require(IDevnetUsdc(burnToken).transferFrom(msg.sender, address(minter), amount), "Transfer operation failed");
        bytes memory body =
            abi.encodePacked(uint32(0), toBytes32(burnToken), mintRecipient, amount, toBytes32(msg.sender));
        nonce = transmitter.sendMessage(destinationDomain, remote, body);
        emit DepositForBurn(
            nonce, burnToken, amount, msg.sender, mintRecipient, destinationDomain, remote, bytes32(0)
        );
    }

    function handleReceiveMessage(uint32 remoteDomain, bytes32 sender, bytes calldata body) external returns (bool) {
        require(msg.sender == address(transmitter), "Invalid message transmitter");
        require(remoteTokenMessengers[remoteDomain] == sender, "Remote TokenMessenger unsupported");
        address recipient = toAddress(bytes32(body[36:68]));
        uint256 amount = uint256(bytes32(body[68:100]));
        minter.mint(token, recipient, amount);
        emit MintAndWithdraw(recipient, amount, token);
        return true;
    }
}

/// CCTP v2's MessageTransmitter: the message leaves with an empty nonce; the attesters give it one.
contract CctpMessageTransmitterV2 {
    event MessageSent(bytes message);
    event MessageReceived(
        address indexed caller,
        uint32 sourceDomain,
        bytes32 indexed nonce,
        bytes32 sender,
        uint32 indexed finalityThresholdExecuted,
        bytes messageBody
    );

    uint32 public immutable localDomain;
    mapping(bytes32 => uint256) public usedNonces;

    constructor(uint32 domain) {
        localDomain = domain;
    }

    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external {
        emit MessageSent(
            abi.encodePacked(
                uint32(1),
                localDomain,
                destinationDomain,
                bytes32(0),
                toBytes32(msg.sender),
                recipient,
                destinationCaller,
                minFinalityThreshold,
                uint32(0),
                messageBody
            )
        );
    }

    function receiveMessage(bytes calldata message, bytes calldata) external returns (bool) {
        require(uint32(bytes4(message[8:12])) == localDomain, "Invalid destination domain");
        bytes32 nonce = bytes32(message[12:44]);
        require(usedNonces[nonce] == 0, "Nonce already used");
        usedNonces[nonce] = 1;
        uint32 source = uint32(bytes4(message[4:8]));
        bytes32 sender = bytes32(message[44:76]);
        uint32 finality = uint32(bytes4(message[144:148]));
        bytes calldata body = message[148:];
        require(
            CctpTokenMessengerV2(toAddress(bytes32(message[76:108]))).handleReceiveMessage(source, sender, body),
            "handleReceiveMessage() failed"
        );
        emit MessageReceived(msg.sender, source, nonce, sender, finality, body);
        return true;
    }
}

/// CCTP v2's TokenMessenger: the mint is the amount less the fee the attesters executed, which goes to `feeRecipient`.
contract CctpTokenMessengerV2 {
    event DepositForBurn(
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 indexed minFinalityThreshold,
        bytes hookData
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected);

    CctpMessageTransmitterV2 public immutable transmitter;
    CctpTokenMinter public immutable minter;
    address public immutable token;
    address public immutable feeRecipient;
    mapping(uint32 => bytes32) public remoteTokenMessengers;

    constructor(CctpMessageTransmitterV2 transmitter_, CctpTokenMinter minter_, address token_, address fees) {
        transmitter = transmitter_;
        minter = minter_;
        token = token_;
        feeRecipient = fees;
    }

    function addRemoteTokenMessenger(uint32 domain, bytes32 messenger) external {
        remoteTokenMessengers[domain] = messenger;
    }

    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external {
        _deposit(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, "");
    }

    function depositForBurnWithHook(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes calldata hookData
    ) external {
        require(hookData.length > 0, "Hook data is empty");
        _deposit(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, hookData);
    }

    function _deposit(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes memory hookData
    ) private {
        require(maxFee < amount, "Max fee must be less than amount");
        bytes32 remote = remoteTokenMessengers[destinationDomain];
        require(remote != bytes32(0), "No TokenMessenger for domain");
        require(IDevnetUsdc(burnToken).transferFrom(msg.sender, address(minter), amount), "Transfer operation failed");
        bytes memory body = abi.encodePacked(
            uint32(1),
            toBytes32(burnToken),
            mintRecipient,
            amount,
            toBytes32(msg.sender),
            maxFee,
            uint256(0),
            uint256(0),
            hookData
        );
        transmitter.sendMessage(destinationDomain, remote, destinationCaller, minFinalityThreshold, body);
        emit DepositForBurn(
            burnToken,
            amount,
            msg.sender,
            mintRecipient,
            destinationDomain,
            remote,
            destinationCaller,
            maxFee,
            minFinalityThreshold,
            hookData
        );
    }

    function handleReceiveMessage(uint32 remoteDomain, bytes32 sender, bytes calldata body) external returns (bool) {
        require(msg.sender == address(transmitter), "Invalid message transmitter");
        require(remoteTokenMessengers[remoteDomain] == sender, "Remote TokenMessenger unsupported");
        address recipient = toAddress(bytes32(body[36:68]));
        uint256 amount = uint256(bytes32(body[68:100]));
        uint256 fee = uint256(bytes32(body[164:196]));
        require(fee <= uint256(bytes32(body[132:164])), "Fee exceeds max fee");
        minter.mint(token, recipient, amount - fee);
        if (fee > 0) minter.mint(token, feeRecipient, fee);
        emit MintAndWithdraw(recipient, amount - fee, token, fee);
        return true;
    }
}
