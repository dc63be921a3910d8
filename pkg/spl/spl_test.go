package spl

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"
)

var (
	owner = solana.MustPublicKeyFromBase58("3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE")
	usdc  = solana.MustPublicKeyFromBase58("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
)

func TestAssociatedTokenAddressVectors(t *testing.T) {
	// espl-program.md §13.1.
	cases := []struct{ program, want string }{
		{TokenProgramID.String(), "HQ6fRTZyj9WYiYmwHsezgqYNsdWe4VaF6TZVsbZXUnzu"},
		{Token2022ProgramID.String(), "3xwhwtN6E9xZZBoKJsS3zrzVEyaFgMZMZ4hTVut6tRGe"},
	}
	for _, c := range cases {
		if got := AssociatedTokenAddress(owner, usdc, solana.MustPublicKeyFromBase58(c.program)); got.String() != c.want {
			t.Errorf("ATA under %s = %s, want %s", c.program, got, c.want)
		}
	}
}

func TestInstructionDataVectors(t *testing.T) {
	// espl-program.md §13.2.
	to := solana.NewWallet().PublicKey()
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"token transfer", TokenTransfer(TokenProgramID, owner, to, owner, 1_500_000).Data, "0360e3160000000000"},
		{"system transfer", SystemTransfer(owner, to, 20_000_000).Data, "02000000002d310100000000"},
		{"create idempotent", CreateAssociatedTokenAccount(owner, owner, usdc, TokenProgramID, true).Data, "01"},
		{"create", CreateAssociatedTokenAccount(owner, owner, usdc, TokenProgramID, false).Data, ""},
	}
	for _, c := range cases {
		if hex.EncodeToString(c.got) != c.want {
			t.Errorf("%s data = %x, want %s", c.name, c.got, c.want)
		}
	}
}

func TestTokenInstructionRoundTrip(t *testing.T) {
	a, b, m := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	freeze := solana.NewWallet().PublicKey()
	cases := []struct {
		data []byte
		want TokenInstruction
	}{
		{TokenTransfer(TokenProgramID, a, b, a, 7).Data, TokenInstruction{Op: TokenTransferOp, Amount: 7}},
		{TokenTransferChecked(TokenProgramID, a, m, b, a, 9, 6).Data, TokenInstruction{Op: TokenTransferCheckedOp, Amount: 9, Decimals: 6}},
		{TokenMintTo(TokenProgramID, m, b, a, 5).Data, TokenInstruction{Op: TokenMintToOp, Amount: 5}},
		{TokenBurn(TokenProgramID, b, m, a, 3).Data, TokenInstruction{Op: TokenBurnOp, Amount: 3}},
		{TokenInitializeAccount3(TokenProgramID, b, m, a).Data, TokenInstruction{Op: TokenInitializeAccount3Op, Owner: a}},
		{TokenInitializeMint2(TokenProgramID, m, 6, a, nil).Data, TokenInstruction{Op: TokenInitializeMint2Op, Decimals: 6, MintAuthority: a}},
		{TokenInitializeMint2(TokenProgramID, m, 9, a, &freeze).Data, TokenInstruction{Op: TokenInitializeMint2Op, Decimals: 9, MintAuthority: a, FreezeAuthority: &freeze}},
		{TokenSetAuthority(TokenProgramID, m, a, AuthorityMintTokens, nil).Data, TokenInstruction{Op: TokenSetAuthorityOp}},
		{TokenSyncNative(TokenProgramID, b).Data, TokenInstruction{Op: TokenSyncNativeOp}},
	}
	for _, c := range cases {
		got, err := DecodeToken(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.want.Op, err)
		}
		if got.Op != c.want.Op || got.Amount != c.want.Amount || got.Decimals != c.want.Decimals ||
			got.Owner != c.want.Owner || got.MintAuthority != c.want.MintAuthority ||
			(got.FreezeAuthority == nil) != (c.want.FreezeAuthority == nil) ||
			(got.FreezeAuthority != nil && *got.FreezeAuthority != *c.want.FreezeAuthority) {
			t.Errorf("%s: got %+v, want %+v", c.want.Op, got, c.want)
		}
	}
	for _, bad := range [][]byte{{}, {3, 1, 2}, {12, 1, 2, 3, 4, 5, 6, 7, 8}, {20, 6}, {99}} {
		if _, err := DecodeToken(bad); !errors.Is(err, ErrInvalidInstruction) {
			t.Errorf("DecodeToken(%x) err = %v", bad, err)
		}
	}
	if TokenTransferOp.String() != "Transfer" || TokenOp(25).String() != "InitializeMintCloseAuthority" {
		t.Error("names")
	}
}

func TestSystemInstructionRoundTrip(t *testing.T) {
	a, b := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	in, err := DecodeSystem(SystemCreateAccount(a, b, 100, 165, TokenProgramID).Data)
	if err != nil || in.Op != SystemCreateAccountOp || in.Lamports != 100 || in.Space != 165 || in.Owner != TokenProgramID {
		t.Fatalf("%+v %v", in, err)
	}
	in, err = DecodeSystem(SystemTransfer(a, b, 42).Data)
	if err != nil || in.Op != SystemTransferOp || in.Lamports != 42 {
		t.Fatalf("%+v %v", in, err)
	}
	in, err = DecodeSystem(SystemAssign(a, TokenProgramID).Data)
	if err != nil || in.Op != SystemAssignOp || in.Owner != TokenProgramID {
		t.Fatalf("%+v %v", in, err)
	}
	in, err = DecodeSystem(SystemAllocate(a, 80).Data)
	if err != nil || in.Op != SystemAllocateOp || in.Space != 80 {
		t.Fatalf("%+v %v", in, err)
	}
	for _, bad := range [][]byte{{}, {2, 0, 0, 0, 1}, {99, 0, 0, 0}, {3, 0, 0, 0}} {
		if _, err := DecodeSystem(bad); !errors.Is(err, ErrInvalidInstruction) {
			t.Errorf("DecodeSystem(%x) err = %v", bad, err)
		}
	}
}

func TestLayouts(t *testing.T) {
	auth := solana.NewWallet().PublicKey()
	m := Mint{MintAuthority: &auth, Supply: 1_000_000, Decimals: 6, IsInitialized: true}
	enc := m.Encode()
	if len(enc) != MintSize {
		t.Fatal(len(enc))
	}
	back, err := DecodeMint(enc)
	if err != nil || *back.MintAuthority != auth || back.Supply != m.Supply || back.Decimals != 6 || !back.IsInitialized || back.FreezeAuthority != nil {
		t.Fatalf("%+v %v", back, err)
	}
	reserve := uint64(2_039_280)
	a := TokenAccount{Mint: usdc, Owner: owner, Amount: 1_500_000, State: StateInitialized, IsNative: &reserve, CloseAuthority: &auth}
	ab := a.Encode()
	if len(ab) != TokenAccountSize || TokenAmountOf(ab) != 1_500_000 {
		t.Fatal("token account encode")
	}
	a2, err := DecodeTokenAccount(ab)
	if err != nil || a2.Mint != usdc || a2.Owner != owner || a2.Amount != 1_500_000 || *a2.IsNative != reserve || *a2.CloseAuthority != auth || a2.Delegate != nil {
		t.Fatalf("%+v %v", a2, err)
	}
	if !bytes.Equal(a2.Encode(), ab) {
		t.Fatal("re-encode differs")
	}
	// Token-2022 extended account: 165 bytes + account type + TLV.
	ext := append(append([]byte{}, ab...), AccountTypeAccount, 0, 0)
	if _, err := DecodeTokenAccount(ext); err != nil {
		t.Fatal(err)
	}
	ext[165] = AccountTypeMint
	if _, err := DecodeTokenAccount(ext); err == nil {
		t.Fatal("mint-typed account decoded as token account")
	}
	for _, bad := range [][]byte{nil, make([]byte, 81), make([]byte, 100)} {
		if _, err := DecodeMint(bad); err == nil {
			t.Errorf("DecodeMint(%d bytes) accepted", len(bad))
		}
	}
}

func TestUIAmount(t *testing.T) {
	cases := []struct {
		amount uint64
		dec    uint8
		want   string
	}{{1_500_000, 6, "1.5"}, {1, 6, "0.000001"}, {42, 0, "42"}, {5_000_000, 6, "5"}, {0, 9, "0"}, {123, 2, "1.23"}}
	for _, c := range cases {
		if got := UIAmountString(c.amount, c.dec); got != c.want {
			t.Errorf("UIAmountString(%d,%d) = %s, want %s", c.amount, c.dec, got, c.want)
		}
	}
	if UIAmount(1_500_000, 6) != 1.5 {
		t.Error("UIAmount")
	}
}

func TestMultisigLayout(t *testing.T) {
	var m Multisig
	m.M, m.N, m.IsInitialized = 2, 3, true
	for i := 0; i < 3; i++ {
		m.Signers[i] = solana.NewWallet().PublicKey()
	}
	b := m.Encode()
	if len(b) != MultisigSize || b[0] != 2 || b[1] != 3 || b[2] != 1 || !bytes.Equal(b[3:35], m.Signers[0][:]) {
		t.Fatalf("encoded %x", b[:40])
	}
	back, err := DecodeMultisig(b)
	if err != nil || back != m {
		t.Fatalf("round trip %+v %v", back, err)
	}
	b[2] = 7
	if _, err := DecodeMultisig(b); !errors.Is(err, ErrInvalidAccount) {
		t.Errorf("bad flag: %v", err)
	}
	if _, err := DecodeMultisig(b[:354]); !errors.Is(err, ErrInvalidAccount) {
		t.Errorf("short: %v", err)
	}
	if NativeMint2022ID.String() != "9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP" || IncineratorID.String() != "1nc1nerator11111111111111111111111111111111" {
		t.Error("ids")
	}
}

func TestSystemWithSeedBuilders(t *testing.T) {
	from, base, to := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	derived, err := solana.CreateWithSeed(base, "vault", TokenProgramID)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ix   []byte
		want SystemInstruction
	}{
		{SystemCreateAccountWithSeed(from, derived, base, "vault", 7, 165, TokenProgramID).Data,
			SystemInstruction{Op: SystemCreateAccountWithSeedOp, Base: base, Seed: "vault", Lamports: 7, Space: 165, Owner: TokenProgramID}},
		{SystemAllocateWithSeed(derived, base, "vault", 80, TokenProgramID).Data,
			SystemInstruction{Op: SystemAllocateWithSeedOp, Base: base, Seed: "vault", Space: 80, Owner: TokenProgramID}},
		{SystemAssignWithSeed(derived, base, "vault", TokenProgramID).Data,
			SystemInstruction{Op: SystemAssignWithSeedOp, Base: base, Seed: "vault", Owner: TokenProgramID}},
		{SystemTransferWithSeed(derived, base, "vault", TokenProgramID, to, 9).Data,
			SystemInstruction{Op: SystemTransferWithSeedOp, Lamports: 9, FromSeed: "vault", FromOwner: TokenProgramID}},
	}
	for _, c := range cases {
		got, err := DecodeSystem(c.ix)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.want.Op, got, err, c.want)
		}
	}
	if n := len(SystemCreateAccountWithSeed(base, derived, base, "x", 1, 0, TokenProgramID).Accounts); n != 2 {
		t.Errorf("base == from should not be listed twice: %d accounts", n)
	}
}
