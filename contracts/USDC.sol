// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/**
 * @title USDC for the project's devnet
 * @notice A small ERC-20 with EIP-3009 that behaves, for everything x402 touches, like Circle's
 * FiatToken v2.2 at Base's canonical USDC address: the same name, version, decimals, EIP-712 domain,
 * type hashes, events and revert reasons, EIP-3009 and EIP-2612 (`permit`, which x402's gas-sponsoring
 * extension has a facilitator submit for a buyer holding no ETH). It lacks what x402 does not use:
 * blacklisting, pausing, minter allowances, upgradeability, and EIP-1271 signatures of contract wallets
 * (the `bytes signature` forms accept 65-byte EOA signatures only).
 *
 * @dev The devnet installs the runtime code with `anvil_setCode`, so the constructor never runs
 * there. Hence every identity value is a constant, the domain separator is computed per call from
 * `block.chainid` and `address(this)`, and the only state the devnet must write by hand is `owner`.
 *
 * Storage layout (the build script checks it): slot 0 `owner`, slot 1 `totalSupply`,
 * slot 2 `balanceOf`, slot 3 `allowance`, slot 4 the authorization states, slot 5 the EIP-2612 nonces.
 */
contract USDC {
    /// @notice The one account allowed to mint. Slot 0: the devnet writes it with `anvil_setStorageAt`.
    address public owner;
    uint256 public totalSupply;
    mapping(address account => uint256) public balanceOf;
    mapping(address holder => mapping(address spender => uint256)) public allowance;
    /// @dev authorizer => nonce => used or canceled. Nonces are random 32-byte values, not a sequence.
    mapping(address authorizer => mapping(bytes32 nonce => bool)) private _authorizationStates;
    /// @notice EIP-2612: each owner's next permit nonce, a sequence (unlike EIP-3009's random nonces).
    mapping(address owner => uint256) public nonces;

    string public constant name = "USD Coin";
    string public constant symbol = "USDC";
    /// @notice The EIP-712 domain version of FiatToken v2; x402 puts it in `extra.version`.
    string public constant version = "2";
    uint8 public constant decimals = 6;

    // The type hashes of FiatToken v2 (EIP-3009), written out so a reader can compare them.
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");
    /// @notice EIP-2612's, as FiatToken v2 hashes it.
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");

    bytes32 private constant _EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant _NAME_HASH = keccak256(bytes(name));
    bytes32 private constant _VERSION_HASH = keccak256(bytes(version));
    /// @dev secp256k1n / 2: a larger `s` is the malleable twin of a valid signature (EIP-2).
    uint256 private constant _MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);
    /// @notice EIP-5267: tells wallets the EIP-712 domain changed (never emitted; declared by the standard).
    event EIP712DomainChanged();

    /// @dev Only runs when the token is deployed normally (tests); the devnet sets slot 0 itself.
    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "USDC: caller is not the owner");
        _;
    }

    // ---------------------------------------------------------------- ERC-20

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    /// @dev Like FiatToken, an allowance of type(uint256).max is spent like any other (no "infinite" case).
    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(value <= allowed, "ERC20: transfer amount exceeds allowance");
        unchecked {
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        _approve(msg.sender, spender, value);
        return true;
    }

    /// @notice Devnet funding: creates `value` new tokens for `to`, logged as a transfer from zero.
    function mint(address to, uint256 value) external onlyOwner returns (bool) {
        require(to != address(0), "USDC: mint to the zero address");
        totalSupply += value;
        unchecked {
            // Cannot overflow: no balance exceeds totalSupply, which the line above checked.
            balanceOf[to] += value;
        }
        emit Transfer(address(0), to, value);
        return true;
    }

    // ---------------------------------------------------------------- EIP-712 / EIP-5267

    /// @notice Computed per call, never cached: the constructor does not run under anvil_setCode,
    /// and the separator must follow the chain id and address the code actually runs at.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(_EIP712_DOMAIN_TYPEHASH, _NAME_HASH, _VERSION_HASH, block.chainid, address(this)));
    }

    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory domainName,
            string memory domainVersion,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        // 0x0f: name, version, chainId and verifyingContract are set; salt and extensions are not.
        return (hex"0f", name, version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---------------------------------------------------------------- EIP-3009

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    /// @notice Anyone may submit a payer's signed transfer; x402 facilitators call this form for EOAs.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, Signature(v, r, s)
        );
    }

    /// @notice The same with a packed 65-byte signature (r ‖ s ‖ v), as FiatToken v2.2 accepts.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, _split(signature)
        );
    }

    /// @notice Only the payee may submit: stops a front-runner from moving the funds before the payee's
    /// own contract call that expects them.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, Signature(v, r, s)
        );
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, _split(signature)
        );
    }

    /// @notice Burns an unused nonce, so a signed authorization that has not been submitted can never be.
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, Signature(v, r, s));
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        _cancelAuthorization(authorizer, nonce, _split(signature));
    }

    // ---------------------------------------------------------------- EIP-2612

    /// @notice Anyone may submit a holder's signed approval (valid until `deadline`, inclusive, as FiatToken).
    /// EIP-2612 names the holder `owner`, which here is the minter's slot.
    function permit(address holder, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        _permit(holder, spender, value, deadline, Signature(v, r, s));
    }

    /// @notice The same with a packed 65-byte signature (r ‖ s ‖ v), as FiatToken v2.2 accepts.
    function permit(address holder, address spender, uint256 value, uint256 deadline, bytes memory signature)
        external
    {
        _permit(holder, spender, value, deadline, _split(signature));
    }

    // ---------------------------------------------------------------- internals

    /// @dev A signature, kept as its parts until the digest it signs is known.
    struct Signature {
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    function _transfer(address from, address to, uint256 value) private {
        require(from != address(0), "ERC20: transfer from the zero address");
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(value <= balance, "ERC20: transfer amount exceeds balance");
        unchecked {
            // Cannot overflow: the sum of all balances is totalSupply.
            balanceOf[from] = balance - value;
            balanceOf[to] += value;
        }
        emit Transfer(from, to, value);
    }

    function _approve(address holder, address spender, uint256 value) private {
        require(holder != address(0), "ERC20: approve from the zero address");
        require(spender != address(0), "ERC20: approve to the zero address");
        allowance[holder][spender] = value;
        emit Approval(holder, spender, value);
    }

    function _permit(address holder, address spender, uint256 value, uint256 deadline, Signature memory signature)
        private
    {
        require(deadline >= block.timestamp, "FiatTokenV2: permit is expired");
        bytes32 structHash = keccak256(abi.encode(PERMIT_TYPEHASH, holder, spender, value, nonces[holder]++, deadline));
        require(_signer(structHash, signature) == holder, "EIP2612: invalid signature");
        _approve(holder, spender, value);
    }

    function _transferWithAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        Signature memory signature
    ) private {
        // Strict bounds on both sides, as FiatToken: valid only when validAfter < now < validBefore.
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        _requireUnusedAuthorization(from, nonce);
        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        require(_signer(structHash, signature) == from, "FiatTokenV2: invalid signature");

        // As FiatToken: AuthorizationUsed is logged just before Transfer; indexers pair the two logs.
        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, Signature memory signature) private {
        _requireUnusedAuthorization(authorizer, nonce);
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        require(_signer(structHash, signature) == authorizer, "FiatTokenV2: invalid signature");

        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) private view {
        require(!_authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
    }

    /// @dev The EIP-712 signer of a struct hash under this token's domain. Rejects what `ecrecover` alone
    /// would let through: a high `s` (the malleable twin), a `v` other than 27/28, and the zero address
    /// that `ecrecover` returns for an invalid signature (else it would "match" `from == address(0)`).
    function _signer(bytes32 structHash, Signature memory signature) private view returns (address signer) {
        require(uint256(signature.s) <= _MAX_S, "ECRecover: invalid signature 's' value");
        require(signature.v == 27 || signature.v == 28, "ECRecover: invalid signature 'v' value");
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        signer = ecrecover(digest, signature.v, signature.r, signature.s);
        require(signer != address(0), "ECRecover: invalid signature");
    }

    /// @dev Splits a packed 65-byte signature r ‖ s ‖ v, the layout viem's signTypedData returns.
    function _split(bytes memory signature) private pure returns (Signature memory) {
        require(signature.length == 65, "ECRecover: invalid signature length");
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        return Signature(v, r, s);
    }
}
