package espl

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// Reference inputs of espl-program.md §13.1.
var (
	vOwner     = solana.MustPublicKeyFromBase58("3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE")
	vMint      = USDCMainnet
	vValidator = ValidatorAsia
)

const vShuttleID = 7

type pdaVectors struct {
	Derivations []struct {
		Name      string `json:"name"`
		ProgramID string `json:"programId"`
		Address   string `json:"address"`
		Bump      int    `json:"bump"`
	} `json:"derivations"`
	InstructionDataExamples []struct {
		Name string `json:"name"`
		Hex  string `json:"hex"`
	} `json:"instructionDataExamples"`
}

func loadVectors(t testing.TB) pdaVectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/pda-derivations.json")
	if err != nil {
		t.Fatal(err)
	}
	var v pdaVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

type derivation func() (solana.PublicKey, uint8)

// vectorDerivations maps each vector name (§13.1) to the derivation under
// test, computed with a fresh Cache and without one.
func vectorDerivations(c *Cache) map[string]derivation {
	tp := spl.TokenProgramID
	eata, _ := c.FindEphemeralATA(vOwner, vMint)
	queue, _ := c.FindTransferQueue(vMint, vValidator)
	meta, _ := c.FindShuttleMetadata(vOwner, vMint, vShuttleID)
	stealth := func(h string) derivation {
		return func() (solana.PublicKey, uint8) {
			k, b, err := c.FindStealthPool([]byte(h))
			if err != nil {
				panic(err)
			}
			return k, b
		}
	}
	return map[string]derivation{
		"eATA(owner, USDC)":                func() (solana.PublicKey, uint8) { return c.FindEphemeralATA(vOwner, vMint) },
		"global vault(USDC)":               func() (solana.PublicKey, uint8) { return c.FindGlobalVault(vMint) },
		"vault eATA":                       func() (solana.PublicKey, uint8) { return c.FindVaultEphemeralATA(vMint) },
		"vault ATA (Token)":                func() (solana.PublicKey, uint8) { return c.FindVaultATA(vMint, tp) },
		"owner ATA (Token)":                func() (solana.PublicKey, uint8) { return c.FindAssociatedTokenAddress(vOwner, vMint, tp) },
		"rent PDA":                         func() (solana.PublicKey, uint8) { return c.FindRentPDA() },
		"transfer queue(USDC, MAS1)":       func() (solana.PublicKey, uint8) { return c.FindTransferQueue(vMint, vValidator) },
		"queue eATA":                       func() (solana.PublicKey, uint8) { return c.FindQueueEphemeralATA(queue, vMint) },
		"queue vault ATA (Token)":          func() (solana.PublicKey, uint8) { return c.FindQueueVaultATA(queue, vMint, tp) },
		"shuttle metadata(owner, USDC, 7)": func() (solana.PublicKey, uint8) { return c.FindShuttleMetadata(vOwner, vMint, vShuttleID) },
		"shuttle eATA":                     func() (solana.PublicKey, uint8) { return c.FindShuttleEphemeralATA(meta, vMint) },
		"shuttle wallet ATA (Token)":       func() (solana.PublicKey, uint8) { return c.FindShuttleWalletATA(meta, vMint, tp) },
		"delegation record(eATA)":          func() (solana.PublicKey, uint8) { return c.FindDelegationRecord(eata) },
		"delegation metadata(eATA)":        func() (solana.PublicKey, uint8) { return c.FindDelegationMetadata(eata) },
		"delegate buffer(eATA)":            func() (solana.PublicKey, uint8) { return c.FindDelegateBuffer(eata, ProgramID) },
		"permission(eATA)":                 func() (solana.PublicKey, uint8) { return c.FindPermission(eata) },
		"magic fee vault(MAS1)":            func() (solana.PublicKey, uint8) { return c.FindMagicFeeVault(vValidator) },
		"group receipt(queue, owner, 1)":   func() (solana.PublicKey, uint8) { return c.FindGroupReceipt(queue, vOwner, 1) },
		"stash(owner, USDC)":               func() (solana.PublicKey, uint8) { return c.FindStash(vOwner, vMint) },
		"queue refill state(queue)":        func() (solana.PublicKey, uint8) { return c.FindQueueRefillState(queue) },
		"refill lamports PDA(queue)":       func() (solana.PublicKey, uint8) { return c.FindQueueRefillLamportsPDA(queue) },
		"owner ATA (Token-2022 program id, same mint bytes)": func() (solana.PublicKey, uint8) {
			return c.FindAssociatedTokenAddress(vOwner, vMint, spl.Token2022ProgramID)
		},
		`stealth pool("john.doe@magicblock.id") [22 bytes]`:                   stealth("john.doe@magicblock.id"),
		`stealth pool("a-forty-byte-handle-for-two-seed-case.id") [40 bytes]`: stealth("a-forty-byte-handle-for-two-seed-case.id"),
		`stealth pool("long-handle-over-sixty-four-bytes-takes-the-sha256-domain-separated-seed.block") [78 bytes]`: stealth(
			"long-handle-over-sixty-four-bytes-takes-the-sha256-domain-separated-seed.block"),
	}
}

func TestPDAVectors(t *testing.T) {
	v := loadVectors(t)
	if len(v.Derivations) != 25 {
		t.Fatalf("vector file has %d derivations, want 25", len(v.Derivations))
	}
	for _, cache := range []*Cache{nil, NewCache(64)} {
		funcs := vectorDerivations(cache)
		for pass := 0; pass < 2; pass++ { // the second pass hits the cache
			for _, d := range v.Derivations {
				f, ok := funcs[d.Name]
				if !ok {
					t.Fatalf("no derivation for vector %q", d.Name)
				}
				addr, bump := f()
				if addr.String() != d.Address || int(bump) != d.Bump {
					t.Errorf("%s (cache=%v): got %s bump %d, want %s bump %d", d.Name, cache != nil, addr, bump, d.Address, d.Bump)
				}
			}
		}
	}
}

// TestPureDerivationsMatchVectors checks the package-level functions too
// (the Cache methods above share their code, but the wrappers differ).
func TestPureDerivationsMatchVectors(t *testing.T) {
	eata, b := FindEphemeralATA(vOwner, vMint)
	want := map[string]struct {
		got  solana.PublicKey
		bump uint8
	}{}
	add := func(name string, k solana.PublicKey, b uint8) {
		want[name] = struct {
			got  solana.PublicKey
			bump uint8
		}{k, b}
	}
	add("eATA(owner, USDC)", eata, b)
	k, b := FindGlobalVault(vMint)
	add("global vault(USDC)", k, b)
	k, b = FindVaultEphemeralATA(vMint)
	add("vault eATA", k, b)
	k, b = FindVaultATA(vMint, spl.TokenProgramID)
	add("vault ATA (Token)", k, b)
	k, b = FindRentPDA()
	add("rent PDA", k, b)
	queue, b := FindTransferQueue(vMint, vValidator)
	add("transfer queue(USDC, MAS1)", queue, b)
	k, b = FindQueueEphemeralATA(queue, vMint)
	add("queue eATA", k, b)
	k, b = FindQueueVaultATA(queue, vMint, spl.TokenProgramID)
	add("queue vault ATA (Token)", k, b)
	meta, b := FindShuttleMetadata(vOwner, vMint, vShuttleID)
	add("shuttle metadata(owner, USDC, 7)", meta, b)
	k, b = FindShuttleEphemeralATA(meta, vMint)
	add("shuttle eATA", k, b)
	k, b = FindShuttleWalletATA(meta, vMint, spl.TokenProgramID)
	add("shuttle wallet ATA (Token)", k, b)
	k, b = FindDelegationRecord(eata)
	add("delegation record(eATA)", k, b)
	k, b = FindDelegationMetadata(eata)
	add("delegation metadata(eATA)", k, b)
	k, b = FindDelegateBuffer(eata, ProgramID)
	add("delegate buffer(eATA)", k, b)
	k, b = FindPermission(eata)
	add("permission(eATA)", k, b)
	k, b = FindMagicFeeVault(vValidator)
	add("magic fee vault(MAS1)", k, b)
	k, b = FindGroupReceipt(queue, vOwner, 1)
	add("group receipt(queue, owner, 1)", k, b)
	k, b = FindStash(vOwner, vMint)
	add("stash(owner, USDC)", k, b)
	k, b = FindQueueRefillState(queue)
	add("queue refill state(queue)", k, b)
	k, b = FindQueueRefillLamportsPDA(queue)
	add("refill lamports PDA(queue)", k, b)
	k, b, err := FindStealthPool([]byte("john.doe@magicblock.id"))
	if err != nil {
		t.Fatal(err)
	}
	add(`stealth pool("john.doe@magicblock.id") [22 bytes]`, k, b)

	for _, d := range loadVectors(t).Derivations {
		w, ok := want[d.Name]
		if !ok {
			continue
		}
		if w.got.String() != d.Address || int(w.bump) != d.Bump {
			t.Errorf("%s: got %s bump %d, want %s bump %d", d.Name, w.got, w.bump, d.Address, d.Bump)
		}
	}
}

func TestOtherDLPDerivations(t *testing.T) {
	// No vectors exist for these; check them against solana-go's reference
	// FindProgramAddress with the seeds of §3.
	eata, _ := FindEphemeralATA(vOwner, vMint)
	check := func(name string, got solana.PublicKey, gotBump uint8, seeds [][]byte, program solana.PublicKey) {
		t.Helper()
		want, wantBump, err := solana.FindProgramAddress(seeds, program)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || gotBump != wantBump {
			t.Errorf("%s: got %s/%d, want %s/%d", name, got, gotBump, want, wantBump)
		}
	}
	k, b := FindStateDiff(eata)
	check("state-diff", k, b, [][]byte{[]byte("state-diff"), eata[:]}, DelegationProgramID)
	k, b = FindCommitStateRecord(eata)
	check("commit-state-record", k, b, [][]byte{[]byte("commit-state-record"), eata[:]}, DelegationProgramID)
	k, b = FindUndelegateBuffer(eata)
	check("undelegate-buffer", k, b, [][]byte{[]byte("undelegate-buffer"), eata[:]}, DelegationProgramID)
	k, b = FindFeesVault()
	check("fees-vault", k, b, [][]byte{[]byte("fees-vault")}, DelegationProgramID)
	k, b = FindValidatorFeesVault(vValidator)
	check("v-fees-vault", k, b, [][]byte{[]byte("v-fees-vault"), vValidator[:]}, DelegationProgramID)
	k, b = FindBalance(vOwner, 3)
	check("balance", k, b, [][]byte{[]byte("balance"), vOwner[:], {3}}, DelegationProgramID)
	perm, _ := FindPermission(eata)
	k, b = FindDelegateBuffer(perm, PermissionProgramID)
	check("buffer under ACL", k, b, [][]byte{[]byte("buffer"), perm[:]}, PermissionProgramID)
	salt := [32]byte{1, 2, 3}
	k, b = FindLamportsPDA(vOwner, vValidator, salt)
	check("lamports", k, b, [][]byte{[]byte("lamports"), vOwner[:], vValidator[:], salt[:]}, ProgramID)
	stash, _ := FindStash(vOwner, vMint)
	mod := stash
	copy(mod[:4], []byte{7, 0, 0, 0})
	k, b = FindHydraCrank(stash, 7)
	check("hydra crank", k, b, [][]byte{[]byte("crank"), mod[:]}, HydraProgramID)
	// A 64-byte handle is still the two-seed case; 65 switches to the hash.
	h64 := []byte(strings.Repeat("x", 64))
	k, b, _ = FindStealthPool(h64)
	check("stealth 64", k, b, [][]byte{[]byte("stealth_pool"), h64[:32], h64[32:]}, ProgramID)
	h65 := []byte(strings.Repeat("y", 65))
	sum := stealthHandleHash(h65)
	k, b, _ = FindStealthPool(h65)
	check("stealth 65", k, b, [][]byte{[]byte("stealth_pool"), h65[:32], sum[:]}, ProgramID)
	h32 := []byte(strings.Repeat("z", 32))
	k, b, _ = FindStealthPool(h32)
	check("stealth 32", k, b, [][]byte{[]byte("stealth_pool"), h32}, ProgramID)
}

func TestInstructionDataVectors(t *testing.T) {
	v := loadVectors(t)
	ref := uint64(42)
	ix16, err := DepositAndQueueTransfer(DepositAndQueueTransferArgs{
		Owner: vOwner, Mint: vMint, Validator: vValidator, Destination: vValidator, Amount: 1_000_000,
		GroupID: 0x0c0b0a, MinDelayMs: 1000, MaxDelayMs: 5000, Split: 3, ClientRefID: &ref,
	})
	if err != nil {
		t.Fatal(err)
	}
	ix25, err := PrivateTransfer(PrivateTransferArgs{
		Owner: vOwner, Mint: vMint, Validator: vValidator, Destination: vMint, ShuttleID: vShuttleID, Amount: 1_000_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	to := solana.MustPublicKeyFromBase58("11111111111111111111111111111112")
	got := map[string][]byte{
		"ix 24 setup+delegate shuttle (shuttleId 7, amount 1000000, validator MAS1)": DepositShuttle(DepositShuttleArgs{
			Owner: vOwner, Mint: vMint, Validator: vValidator, ShuttleID: vShuttleID, Amount: 1_000_000}).Data,
		"ix 26 withdraw through shuttle (shuttleId 7, amount 1000000, validator MAS1)": WithdrawShuttle(WithdrawShuttleArgs{
			Owner: vOwner, Mint: vMint, Validator: vValidator, ShuttleID: vShuttleID, Amount: 1_000_000}).Data,
		"ix 4 delegate eATA (validator MAS1)": DelegateEphemeralATA(DelegateEphemeralATAArgs{
			Owner: vOwner, Mint: vMint, Validator: vValidator}).Data,
		"ix 16 deposit-and-queue (amount 1000000, groupId 0x0c0b0a, min 1000, max 5000, split 3, clientRefId 42)":      ix16.Data,
		"ix 25 cleartext prefix (shuttleId 7, amount 1000000, exactOut true); bytes 14..93 are the sealed destination": ix25.Data[:14],
		"ix 25 suffix plaintext before sealing (min 0, max 0, split 1, clientRefId 42)": PrivateTransferSuffix{
			Split: 1, ClientRefID: &ref}.Encode(),
		"Token Transfer 1500000":            spl.TokenTransfer(spl.TokenProgramID, vOwner, to, vOwner, 1_500_000).Data,
		"System Transfer 20000000 lamports": spl.SystemTransfer(vOwner, to, RentPDATargetLamports).Data,
	}
	for _, e := range v.InstructionDataExamples {
		g, ok := got[e.Name]
		if !ok {
			t.Errorf("no encoder for vector %q", e.Name)
			continue
		}
		if hex.EncodeToString(g) != e.Hex {
			t.Errorf("%s:\n got  %x\n want %s", e.Name, g, e.Hex)
		}
	}
	// The validator's raw bytes as §13.2 states them.
	if hex.EncodeToString(vValidator[:]) != "052a47ab837ab60c3dd89fc4c84a619e2a8c522f3f8188fee2438a58a97617b2" {
		t.Errorf("MAS1 bytes = %x", vValidator[:])
	}
}

func TestFindProgramAddressMatchesSolanaGo(t *testing.T) {
	prog := ProgramID
	for i := 0; i < 300; i++ {
		seed := []byte{byte(i), byte(i >> 8), 0xAB}
		k, b, err := FindProgramAddress([][]byte{[]byte("x"), seed}, prog)
		if err != nil {
			t.Fatal(err)
		}
		wk, wb, _ := solana.FindProgramAddress([][]byte{[]byte("x"), seed}, prog)
		if k != wk || b != wb {
			t.Fatalf("seed %x: got %s/%d, want %s/%d", seed, k, b, wk, wb)
		}
		ck, err := CreateProgramAddress([][]byte{[]byte("x"), seed, {b}}, prog)
		if err != nil || ck != k {
			t.Fatalf("CreateProgramAddress(bump %d) = %s, %v; want %s", b, ck, err, k)
		}
	}
	long := make([]byte, 33)
	if _, _, err := FindProgramAddress([][]byte{long}, prog); err == nil {
		t.Error("33-byte seed accepted")
	}
	if _, _, err := FindProgramAddress(make([][]byte, 16), prog); err == nil {
		t.Error("16 seeds (17 with the bump) accepted")
	}
	if _, err := CreateProgramAddress(make([][]byte, 17), prog); err == nil {
		t.Error("CreateProgramAddress accepted 17 seeds")
	}
	// An on-curve hash is rejected: find a bump that solana-go skips.
	found := false
	for i := 0; i < 50 && !found; i++ {
		seed := []byte{byte(i)}
		_, b, _ := solana.FindProgramAddress([][]byte{seed}, prog)
		if b < 255 {
			if _, err := CreateProgramAddress([][]byte{seed, {b + 1}}, prog); err == nil {
				t.Errorf("on-curve address for bump %d accepted", b+1)
			}
			found = true
		}
	}
	if !found {
		t.Error("no on-curve case exercised")
	}
}
