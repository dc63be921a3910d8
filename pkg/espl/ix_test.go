package espl

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func testKey(i byte) solana.PublicKey {
	var k solana.PublicKey
	for j := range k {
		k[j] = i ^ byte(j*7)
	}
	return k
}

func ata(owner, mint, tp solana.PublicKey) solana.PublicKey {
	return spl.AssociatedTokenAddress(owner, mint, tp)
}

func pda(k solana.PublicKey, _ uint8) solana.PublicKey { return k }

// deleg returns buffer (under ESPL), delegation record and metadata of x.
func deleg(x solana.PublicKey) []solana.PublicKey {
	return []solana.PublicKey{pda(FindDelegateBuffer(x, ProgramID)), pda(FindDelegationRecord(x)), pda(FindDelegationMetadata(x))}
}

func keys(parts ...any) []solana.PublicKey {
	var out []solana.PublicKey
	for _, p := range parts {
		switch v := p.(type) {
		case solana.PublicKey:
			out = append(out, v)
		case []solana.PublicKey:
			out = append(out, v...)
		default:
			panic("keys: bad part")
		}
	}
	return out
}

func hexd(parts ...string) string { return strings.Join(parts, "") }

func u32h(v uint32) string { return hex.EncodeToString(binary.LittleEndian.AppendUint32(nil, v)) }
func u64h(v uint64) string { return hex.EncodeToString(binary.LittleEndian.AppendUint64(nil, v)) }
func keyh(k solana.PublicKey) string {
	return hex.EncodeToString(k[:])
}

type ixCase struct {
	name  string
	ix    txwire.Instruction
	keys  []solana.PublicKey
	flags string // per account, from the §7 tables: SW, S, W or -
	data  string // hex; empty means only the prefix is checked
	pfx   string // hex prefix (ix 25)
	dlen  int    // expected data length when data is empty
}

// ixCases builds one row per instruction form, with the expected keys and
// flags transcribed from espl-program.md §7 / §9.1.
func ixCases(t testing.TB, c *Cache) []ixCase {
	must := func(ix txwire.Instruction, err error) txwire.Instruction {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	tp := spl.TokenProgramID
	payer, owner, mint, val := testKey(1), vOwner, vMint, vValidator
	dest, auth, reimb := testKey(2), testKey(3), testKey(4)
	sys, ataProg, dlp, acl := spl.SystemProgramID, spl.AssociatedTokenProgramID, DelegationProgramID, PermissionProgramID
	eata := pda(FindEphemeralATA(owner, mint))
	vault := pda(FindGlobalVault(mint))
	veata := pda(FindEphemeralATA(vault, mint))
	vata := ata(vault, mint, tp)
	oata := ata(owner, mint, tp)
	queue := pda(FindTransferQueue(mint, val))
	qeata := pda(FindEphemeralATA(queue, mint))
	qata := ata(queue, mint, tp)
	rent := pda(FindRentPDA())
	smeta := pda(FindShuttleMetadata(owner, mint, vShuttleID))
	seata := pda(FindEphemeralATA(smeta, mint))
	swallet := ata(smeta, mint, tp)
	perm := pda(FindPermission(eata))
	feeVault := pda(FindMagicFeeVault(val))
	receipt := pda(FindGroupReceipt(queue, owner, 0x0c0b0a))
	handle := []byte("john.doe@magicblock.id")
	pool, _, _ := FindStealthPool(handle)
	storage, _ := EncodeHandle(handle)
	lam := pda(FindLamportsPDA(rent, queue, queue))
	ref := uint64(42)
	esc := uint8(0)
	d1, d2 := testKey(9), testKey(10)

	ix16 := DepositAndQueueTransferArgs{Owner: owner, Mint: mint, Validator: val, Destination: dest, Amount: 1_000_000,
		GroupID: 0x0c0b0a, MinDelayMs: 1000, MaxDelayMs: 5000, Split: 3, ClientRefID: &ref, Cache: c}
	ix16api := ix16
	ix16api.WithGroupReceiptPermission = true
	ix16api.ClientRefID = nil
	ix16vec := "1040420f00000000000a0b0ce8030000000000008813000000000000030000002a00000000000000"
	ix16keys := keys(queue, queue, mint, oata, qata, dest, owner, tp, oata, receipt, MagicVaultID, MagicProgramID)

	ix25 := PrivateTransferArgs{Payer: payer, Owner: owner, Mint: mint, Validator: val, Destination: dest,
		ShuttleID: vShuttleID, Amount: 1_000_000, MinDelayMs: 10, MaxDelayMs: 20, Split: 2, Cache: c}
	ix25ref := ix25
	ix25ref.ClientRefID = &ref
	ix25ref.DeductFee = true
	ix25keys := keys(payer, rent, smeta, seata, swallet, owner, ProgramID, deleg(seata), dlp, ataProg, sys, mint, tp,
		vault, oata, vata, queue)
	const ix25flags = "SW W W W W S - W W W - - - - - - W W W"

	return []ixCase{
		{name: "0 InitializeEphemeralAta", ix: InitEphemeralATA(InitEphemeralATAArgs{Payer: payer, Owner: owner, Mint: mint, Cache: c}),
			keys: keys(eata, payer, owner, mint, sys), flags: "W SW - - -", data: "00"},
		{name: "1 InitializeGlobalVault", ix: InitGlobalVault(InitGlobalVaultArgs{Payer: payer, Mint: mint, Cache: c}),
			keys: keys(vault, payer, mint, veata, vata, tp, ataProg, sys), flags: "W SW - W W - - -", data: "01"},
		{name: "2 DepositSplTokens", ix: DepositSPL(DepositSPLArgs{Owner: owner, Mint: mint, Amount: 5, Cache: c}),
			keys: keys(eata, vault, mint, oata, vata, owner, tp), flags: "W - - W W S -", data: "02" + u64h(5)},
		{name: "3 WithdrawSplTokens", ix: WithdrawSPL(WithdrawSPLArgs{Owner: owner, Mint: mint, Amount: 6, Cache: c}),
			keys: keys(owner, eata, vault, mint, vata, oata, tp), flags: "S W - - W W -", data: "03" + u64h(6)},
		{name: "4 DelegateEphemeralAta", ix: DelegateEphemeralATA(DelegateEphemeralATAArgs{Payer: payer, Owner: owner, Mint: mint, Validator: val, Cache: c}),
			keys: keys(payer, eata, ProgramID, deleg(eata), dlp, sys), flags: "SW W - W W W - -", data: "04" + keyh(val)},
		{name: "4 DelegateEphemeralAta (vault eATA, no validator)", ix: DelegateEphemeralATA(DelegateEphemeralATAArgs{Payer: payer, Owner: vault, Mint: mint}),
			keys: keys(payer, veata, ProgramID, deleg(veata), dlp, sys), flags: "SW W - W W W - -", data: "04"},
		{name: "5 UndelegateEphemeralAta", ix: UndelegateEphemeralATA(UndelegateEphemeralATAArgs{Owner: owner, Mint: mint, Cache: c}),
			keys: keys(owner, oata, eata, MagicContextID, MagicProgramID), flags: "S W - W -", data: "05"},
		{name: "5 UndelegateEphemeralAta (fee vault, Token-2022 keeps the Tokenkeg ATA)", ix: UndelegateEphemeralATA(UndelegateEphemeralATAArgs{Owner: owner, Mint: mint, Validator: val}),
			keys: keys(owner, oata, eata, MagicContextID, MagicProgramID, feeVault), flags: "S W - W - W", data: "05" + keyh(val)},
		{name: "6 CreateEphemeralAtaPermission", ix: CreateEphemeralATAPermission(CreateEphemeralATAPermissionArgs{Payer: payer, Owner: owner, Mint: mint, Cache: c}),
			keys: keys(eata, perm, payer, sys, acl), flags: "W W SW - -", data: "0600"},
		{name: "7 DelegateEphemeralAtaPermission", ix: DelegateEphemeralATAPermission(DelegateEphemeralATAPermissionArgs{Payer: payer, Owner: owner, Mint: mint, Validator: val, Cache: c}),
			keys:  keys(payer, eata, acl, perm, sys, pda(FindDelegateBuffer(perm, acl)), pda(FindDelegationRecord(perm)), pda(FindDelegationMetadata(perm)), dlp, val),
			flags: "SW W - W - W W W - -", data: "07"},
		{name: "8 UndelegateEphemeralAtaPermission", ix: UndelegateEphemeralATAPermission(UndelegateEphemeralATAPermissionArgs{Owner: owner, Mint: mint}),
			keys: keys(owner, eata, perm, acl, MagicProgramID, MagicContextID), flags: "S W W - - W", data: "08"},
		{name: "9 ResetEphemeralAtaPermission", ix: ResetEphemeralATAPermission(ResetEphemeralATAPermissionArgs{Payer: payer, Owner: owner, Mint: mint, Flags: 2}),
			keys: keys(eata, perm, payer, acl), flags: "- W S -", data: "0902"},
		{name: "11 InitializeShuttleEphemeralAta", ix: InitShuttle(InitShuttleArgs{Payer: payer, Owner: owner, Mint: mint, ShuttleID: vShuttleID}),
			keys: keys(payer, smeta, seata, swallet, owner, mint, tp, ataProg, sys), flags: "SW W W W - - - - -", data: "0b" + u32h(7)},
		{name: "12 InitializeTransferQueue", ix: InitTransferQueue(InitTransferQueueArgs{Payer: payer, Mint: mint, Validator: val, Cache: c}),
			keys:  keys(payer, queue, pda(FindPermission(queue)), mint, val, sys, acl, qeata, qata, tp, ataProg, ProgramID, deleg(qeata), dlp),
			flags: "SW W W - - - - W W - - - W W W -", data: "0c"},
		{name: "12 InitializeTransferQueue (requestedItems)", ix: InitTransferQueue(InitTransferQueueArgs{Payer: payer, Mint: mint, Validator: val, RequestedItems: 50}),
			keys:  keys(payer, queue, pda(FindPermission(queue)), mint, val, sys, acl, qeata, qata, tp, ataProg, ProgramID, deleg(qeata), dlp),
			flags: "SW W W - - - - W W - - - W W W -", data: "0c" + u32h(50)},
		{name: "13 DelegateShuttleEphemeralAta", ix: DelegateShuttle(DelegateShuttleArgs{Payer: payer, Owner: owner, Mint: mint, ShuttleID: vShuttleID, Validator: val}),
			keys: keys(payer, smeta, seata, ProgramID, deleg(seata), dlp, sys), flags: "SW - W - W W W - -", data: "0d" + keyh(val)},
		{name: "14 UndelegateAndCloseShuttleToOwner", ix: UndelegateAndCloseShuttle(UndelegateAndCloseShuttleArgs{Payer: payer, RentReimbursement: reimb, Owner: owner, Mint: mint, ShuttleID: vShuttleID}),
			keys: keys(payer, reimb, smeta, seata, swallet, oata, tp, MagicContextID, MagicProgramID), flags: "SW W - - W W - W -", data: "0e"},
		{name: "14 UndelegateAndCloseShuttleToOwner (escrow index)", ix: UndelegateAndCloseShuttle(UndelegateAndCloseShuttleArgs{Payer: payer, RentReimbursement: reimb, Owner: owner, Mint: mint, ShuttleID: vShuttleID, Destination: dest, EscrowIndex: &esc}),
			keys: keys(payer, reimb, smeta, seata, swallet, dest, tp, MagicContextID, MagicProgramID), flags: "SW W - - W W - W -", data: "0e00"},
		{name: "15 MergeShuttleIntoEphemeralAta", ix: MergeShuttle(MergeShuttleArgs{Owner: owner, Mint: mint, ShuttleID: vShuttleID}),
			keys: keys(owner, oata, smeta, swallet, mint, tp), flags: "S W - W - -", data: "0f"},
		{name: "16 DepositAndQueueTransfer (SDK, 12 accounts)", ix: must(DepositAndQueueTransfer(ix16)),
			keys: ix16keys, flags: "W - - W W - S - W W W -", data: ix16vec},
		{name: "16 DepositAndQueueTransfer (hosted API, 14 accounts)", ix: must(DepositAndQueueTransfer(ix16api)),
			keys: keys(ix16keys, pda(FindPermission(receipt)), acl), flags: "W - - W W - S - W W W - W -", data: ix16vec[:64]},
		{name: "17 EnsureTransferQueueCrank", ix: EnsureQueueCrank(EnsureQueueCrankArgs{Payer: payer, Mint: mint, Validator: val, Cache: c}),
			keys: keys(payer, queue, feeVault, MagicContextID, MagicProgramID), flags: "SW W W W -", data: "11"},
		{name: "19 DelegateTransferQueue", ix: DelegateTransferQueue(DelegateTransferQueueArgs{Payer: payer, Mint: mint, Validator: val, Cache: c}),
			keys: keys(payer, queue, mint, ProgramID, deleg(queue), dlp, sys), flags: "SW W - - W W W - -", data: "13"},
		{name: "21 UpdateStealthPool", ix: must(UpdateStealthPool(UpdateStealthPoolArgs{Payer: payer, Authority: auth, Handle: handle, Flags: StealthFlagSplitAcrossKeys, Destinations: []solana.PublicKey{d1, d2}, Cache: c})),
			keys: keys(payer, pool, auth, sys), flags: "SW W S -", data: "15" + hex.EncodeToString(storage[:]) + "0102" + keyh(d1) + keyh(d2)},
		{name: "22 EnsureStealthPoolDelegated", ix: must(EnsureStealthPoolDelegated(EnsureStealthPoolDelegatedArgs{Payer: payer, Authority: auth, Handle: handle, Validator: val, Cache: c})),
			keys:  keys(payer, pool, pda(FindPermission(pool)), ProgramID, deleg(pool), dlp, sys, acl, auth),
			flags: "SW W W - W W W - - - S", data: "16" + hex.EncodeToString(storage[:]) + keyh(val)},
		{name: "22 EnsureStealthPoolDelegated (no validator)", ix: must(EnsureStealthPoolDelegated(EnsureStealthPoolDelegatedArgs{Payer: payer, Authority: auth, Handle: handle})),
			keys:  keys(payer, pool, pda(FindPermission(pool)), ProgramID, deleg(pool), dlp, sys, acl, auth),
			flags: "SW W W - W W W - - - S", data: "16" + hex.EncodeToString(storage[:])},
		{name: "23 InitializeRentPda", ix: InitRentPDA(InitRentPDAArgs{Payer: payer, Cache: c}),
			keys: keys(payer, rent, sys), flags: "SW W -", data: "17"},
		{name: "24 SetupAndDelegateShuttleEphemeralAtaWithMerge (deposit)", ix: DepositShuttle(DepositShuttleArgs{Owner: owner, Mint: mint, Validator: val, ShuttleID: vShuttleID, Amount: 1_000_000, Cache: c}),
			keys:  keys(owner, rent, smeta, seata, swallet, owner, ProgramID, deleg(seata), dlp, ataProg, sys, oata, mint, tp, vault, oata, vata),
			flags: "SW W W W W S - W W W - - - W - - - W W", data: "180700000040420f0000000000" + keyh(val)},
		{name: "24 SetupAndDelegateShuttleEphemeralAtaWithMerge (private base→ER, no validator)", ix: DepositShuttle(DepositShuttleArgs{Payer: payer, Owner: owner, Mint: mint, ShuttleID: vShuttleID, Amount: 1, Destination: ata(dest, mint, tp)}),
			keys:  keys(payer, rent, smeta, seata, swallet, owner, ProgramID, deleg(seata), dlp, ataProg, sys, ata(dest, mint, tp), mint, tp, vault, oata, vata),
			flags: "SW W W W W S - W W W - - - W - - - W W", data: "1807000000" + u64h(1)},
		{name: "25 private transfer (no clientRefId)", ix: must(PrivateTransfer(ix25)),
			keys: ix25keys, flags: ix25flags, pfx: "190700000040420f000000000001", dlen: 196},
		{name: "25 private transfer (clientRefId, fee deducted)", ix: must(PrivateTransfer(ix25ref)),
			keys: ix25keys, flags: ix25flags, pfx: "190700000040420f000000000000", dlen: 204},
		{name: "26 WithdrawThroughDelegatedShuttleWithMerge", ix: WithdrawShuttle(WithdrawShuttleArgs{Owner: owner, Mint: mint, Validator: val, ShuttleID: vShuttleID, Amount: 1_000_000, Cache: c}),
			keys:  keys(owner, rent, smeta, seata, swallet, owner, ProgramID, deleg(seata), dlp, ataProg, sys, oata, mint, tp),
			flags: "SW W W W W S - W W W - - - W - -", data: "1a0700000040420f0000000000" + keyh(val)},
		{name: "27 AllocateTransferQueue", ix: AllocateTransferQueue(AllocateTransferQueueArgs{Mint: mint, Validator: val, Cache: c}),
			keys: keys(queue, sys), flags: "W -", data: "1b"},
		{name: "28 ExecutePendingTransferQueueRefill", ix: ExecuteQueueRefill(ExecuteQueueRefillArgs{Mint: mint, Validator: val, Cache: c}),
			keys:  keys(pda(FindQueueRefillState(queue)), queue, rent, lam, ProgramID, deleg(lam), dlp, sys, pda(FindDelegationRecord(queue))),
			flags: "W W W W - W W W - - -", data: "1c"},
	}
}

func parseFlags(s string) (signer, writable []bool) {
	for _, f := range strings.Fields(s) {
		signer = append(signer, strings.Contains(f, "S"))
		writable = append(writable, strings.Contains(f, "W"))
	}
	return signer, writable
}

func TestInstructionLayouts(t *testing.T) {
	for _, cache := range []*Cache{nil, NewCache(0)} {
		for _, tc := range ixCases(t, cache) {
			t.Run(tc.name, func(t *testing.T) {
				ix := tc.ix
				if ix.ProgramID != ProgramID {
					t.Errorf("program = %s", ix.ProgramID)
				}
				sig, wr := parseFlags(tc.flags)
				if len(sig) != len(tc.keys) {
					t.Fatalf("bad test row: %d flags for %d keys", len(sig), len(tc.keys))
				}
				if len(ix.Accounts) != len(tc.keys) {
					t.Fatalf("%d accounts, want %d", len(ix.Accounts), len(tc.keys))
				}
				for i, m := range ix.Accounts {
					if m.PublicKey != tc.keys[i] || m.IsSigner != sig[i] || m.IsWritable != wr[i] {
						t.Errorf("account %d = %s s=%v w=%v, want %s s=%v w=%v", i, m.PublicKey, m.IsSigner, m.IsWritable,
							tc.keys[i], sig[i], wr[i])
					}
				}
				got := hex.EncodeToString(ix.Data)
				switch {
				case tc.data != "" && !strings.HasPrefix(got, tc.data):
					t.Errorf("data = %s, want %s", got, tc.data)
				case tc.data != "" && len(tc.data) >= 2*len(ix.Data) && got != tc.data:
					t.Errorf("data = %s, want %s", got, tc.data)
				case tc.pfx != "" && !strings.HasPrefix(got, tc.pfx):
					t.Errorf("data = %s, want prefix %s", got, tc.pfx)
				case tc.dlen != 0 && len(ix.Data) != tc.dlen:
					t.Errorf("data length %d, want %d", len(ix.Data), tc.dlen)
				}
				roundTrip(t, ix)
			})
		}
	}
}

// roundTrip decodes ix and re-encodes it; the result must be identical,
// and the decoded accounts must carry the spec's role names and flags.
func roundTrip(t *testing.T, ix txwire.Instruction) Decoded {
	t.Helper()
	d, err := DecodeInstruction(ix)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if uint8(d.Discriminator()) != ix.Data[0] {
		t.Errorf("discriminator %d, want %d", d.Discriminator(), ix.Data[0])
	}
	back := d.Instruction()
	if !reflect.DeepEqual(back, ix) {
		t.Errorf("re-encoded instruction differs:\n got  %+v\n want %+v", back, ix)
	}
	accs := d.Accounts()
	if len(accs) != len(ix.Accounts) {
		t.Fatalf("Accounts() has %d entries, want %d", len(accs), len(ix.Accounts))
	}
	for i, a := range accs {
		m := ix.Accounts[i]
		if a.Name == "" || a.Key != m.PublicKey || a.Signer != m.IsSigner || a.Writable != m.IsWritable {
			t.Errorf("Accounts()[%d] = %+v, meta %+v", i, a, m)
		}
	}
	if s := Summary(d); !strings.HasPrefix(s, "ESPL ") || !strings.Contains(s, d.Discriminator().String()) {
		t.Errorf("summary %q", s)
	}
	return d
}

func TestDecodedTypedValues(t *testing.T) {
	ref := uint64(42)
	ix, err := DepositAndQueueTransfer(DepositAndQueueTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator,
		Destination: testKey(2), Amount: 1_000_000, GroupID: 0x0c0b0a, MinDelayMs: 1000, MaxDelayMs: 5000, Split: 3,
		ClientRefID: &ref, WithGroupReceiptPermission: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeInstruction(ix)
	if err != nil {
		t.Fatal(err)
	}
	q, ok := d.(DepositAndQueueTransferIx)
	if !ok {
		t.Fatalf("decoded %T", d)
	}
	if q.Amount != 1_000_000 || q.GroupID != 0x0c0b0a || q.MinDelayMs != 1000 || q.MaxDelayMs != 5000 || q.Split != 3 ||
		q.ClientRefID == nil || *q.ClientRefID != 42 || q.LegacyFlags != nil || !q.HasGroupReceiptPermission ||
		q.Destination != testKey(2) || q.Owner != vOwner {
		t.Errorf("decoded %+v", q)
	}
	want := "ESPL 16 DepositAndQueueTransfer: amount=1000000, groupId=789258, minDelayMs=1000, maxDelayMs=5000, split=3, clientRefId=42"
	if s := Summary(d); s != want {
		t.Errorf("summary\n got  %s\n want %s", s, want)
	}

	sh := DepositShuttle(DepositShuttleArgs{Owner: vOwner, Mint: vMint, Validator: vValidator, ShuttleID: 7, Amount: 9})
	d, _ = DecodeInstruction(sh)
	if s := Summary(d); s != "ESPL 24 SetupAndDelegateShuttleEphemeralAtaWithMerge: shuttleId=7, amount=9, validator="+vValidator.String() {
		t.Errorf("summary %s", s)
	}
	if v := d.(DepositShuttleIx); v.ShuttleID != 7 || v.Amount != 9 || *v.Validator != vValidator || v.Owner != vOwner {
		t.Errorf("decoded %+v", v)
	}
}

func TestDepositAndQueueTransferLegacyArgs(t *testing.T) {
	ix, err := DepositAndQueueTransfer(DepositAndQueueTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator,
		Destination: testKey(2), Amount: 10, GroupID: 5, Split: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Data) != 32 {
		t.Fatalf("SDK form without clientRefId is %d bytes, want 32", len(ix.Data))
	}
	keys := make([]solana.PublicKey, len(ix.Accounts))
	for i, m := range ix.Accounts {
		keys[i] = m.PublicKey
	}
	base := ix.Data
	for _, tc := range []struct {
		extra      []byte
		flags, ref bool
	}{
		{nil, false, false},
		{[]byte{7}, true, false},
		{binary.LittleEndian.AppendUint64(nil, 99), false, true},
		{append([]byte{7}, binary.LittleEndian.AppendUint64(nil, 99)...), true, true},
	} {
		data := append(append([]byte(nil), base...), tc.extra...)
		d, err := Decode(data, keys)
		if err != nil {
			t.Fatalf("args %d bytes: %v", len(data)-1, err)
		}
		q := d.(DepositAndQueueTransferIx)
		if (q.LegacyFlags != nil) != tc.flags || (q.ClientRefID != nil) != tc.ref ||
			(tc.flags && *q.LegacyFlags != 7) || (tc.ref && *q.ClientRefID != 99) {
			t.Errorf("args %d bytes: flags %v ref %v", len(data)-1, q.LegacyFlags, q.ClientRefID)
		}
		if !bytes.Equal(q.Instruction().Data, data) {
			t.Errorf("args %d bytes: re-encoding differs", len(data)-1)
		}
	}
	for _, n := range []int{30, 33, 38, 41} {
		data := make([]byte, 1+n)
		data[0] = 16
		if _, err := Decode(data, keys); !errors.Is(err, ErrInvalidInstruction) {
			t.Errorf("%d arg bytes accepted: %v", n, err)
		}
	}
}

func TestDepositAndQueueTransferValidation(t *testing.T) {
	base := DepositAndQueueTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator, Destination: testKey(2),
		Amount: 10, GroupID: 5, Split: 2}
	bad := []func(a *DepositAndQueueTransferArgs){
		func(a *DepositAndQueueTransferArgs) { a.Amount = 0 },
		func(a *DepositAndQueueTransferArgs) { a.Split = 11 },
		func(a *DepositAndQueueTransferArgs) { a.MinDelayMs, a.MaxDelayMs = 10, 5 },
		func(a *DepositAndQueueTransferArgs) { a.GroupID = 1 << 24 },
		func(a *DepositAndQueueTransferArgs) { a.Validator = solana.PublicKey{} },
		func(a *DepositAndQueueTransferArgs) { a.Destination = solana.PublicKey{} },
	}
	for i, f := range bad {
		a := base
		f(&a)
		if _, err := DepositAndQueueTransfer(a); !errors.Is(err, ErrInvalidInstruction) {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
	// Defaults: random group id, split 1, max = min.
	a := base
	a.GroupID, a.Split, a.MinDelayMs = 0, 0, 700
	ix, err := DepositAndQueueTransfer(a)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := DecodeInstruction(ix)
	q := d.(DepositAndQueueTransferIx)
	if !ValidGroupID(q.GroupID) || q.Split != 1 || q.MaxDelayMs != 700 {
		t.Errorf("defaults: %+v", q)
	}
	if want, _ := FindGroupReceipt(q.Queue, vOwner, q.GroupID); q.GroupReceipt != want {
		t.Errorf("group receipt %s, want %s", q.GroupReceipt, want)
	}
}

func TestWithGroupReceiptPermission(t *testing.T) {
	a := DepositAndQueueTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator, Destination: testKey(2),
		Amount: 10, GroupID: 5}
	sdk, _ := DepositAndQueueTransfer(a)
	a.WithGroupReceiptPermission = true
	api, _ := DepositAndQueueTransfer(a)
	got := WithGroupReceiptPermission(sdk)
	if !reflect.DeepEqual(got, api) {
		t.Errorf("post-processed 12-account ix 16 differs from the 14-account build")
	}
	if len(sdk.Accounts) != 12 {
		t.Errorf("input modified")
	}
	if again := WithGroupReceiptPermission(api); len(again.Accounts) != 14 {
		t.Errorf("14-account ix extended again")
	}
	other := InitRentPDA(InitRentPDAArgs{Payer: vOwner})
	if !reflect.DeepEqual(WithGroupReceiptPermission(other), other) {
		t.Errorf("non-16 instruction changed")
	}
}

func TestDecodeErrors(t *testing.T) {
	ks := make([]solana.PublicKey, 20)
	cases := map[string][]byte{
		"empty":               nil,
		"ix 0 with args":      {0, 1},
		"ix 2 short":          {2, 1, 2, 3},
		"ix 4 bad validator":  append([]byte{4}, make([]byte, 31)...),
		"ix 6 no flags":       {6},
		"ix 12 bad items":     {12, 1, 2},
		"ix 24 bad length":    append([]byte{24}, make([]byte, 13)...),
		"ix 25 short":         append([]byte{25}, make([]byte, 50)...),
		"ix 21 short":         append([]byte{21}, make([]byte, 100)...),
		"ix 22 zero handle":   append([]byte{22}, make([]byte, 256)...),
		"ix 22 bad length":    append(append([]byte{22, 1, 'a'}, make([]byte, 254)...), 9),
		"ix 14 long":          {14, 1, 2},
		"ix 26 13 arg bytes":  append([]byte{26}, make([]byte, 13)...),
		"ix 28 with arg":      {28, 0},
		"ix 16 wrong length":  append([]byte{16}, make([]byte, 35)...),
		"ix 5 bad validator":  append([]byte{5}, make([]byte, 5)...),
		"ix 9 two flag bytes": {9, 1, 2},
	}
	for name, data := range cases {
		if _, err := Decode(data, ks); !errors.Is(err, ErrInvalidInstruction) {
			t.Errorf("%s: err = %v, want ErrInvalidInstruction", name, err)
		}
	}
	for _, d := range []byte{10, 18, 20, 29, 30, 31, 196, 201, 255, 100} {
		if _, err := Decode([]byte{d}, ks); !errors.Is(err, ErrUnsupportedInstruction) {
			t.Errorf("ix %d: err = %v, want ErrUnsupportedInstruction", d, err)
		}
	}
	// Too few accounts.
	ix := InitGlobalVault(InitGlobalVaultArgs{Payer: vOwner, Mint: vMint})
	if _, err := Decode(ix.Data, ks[:7]); !errors.Is(err, ErrInvalidInstruction) {
		t.Errorf("7 accounts for ix 1: %v", err)
	}
	// Extra accounts are ignored.
	if d, err := Decode(ix.Data, ks); err != nil || len(d.Accounts()) != 8 {
		t.Errorf("20 accounts for ix 1: %v", err)
	}
	if _, err := DecodeInstruction(txwire.Instruction{ProgramID: spl.TokenProgramID, Data: []byte{0}}); err == nil {
		t.Error("foreign program decoded")
	}
}

func TestNames(t *testing.T) {
	want := map[uint8]string{
		0: "InitializeEphemeralAta", 16: "DepositAndQueueTransfer", 18: "Unused18",
		25:  "DepositAndDelegateShuttleEphemeralAtaWithMergeAndPrivateTransfer",
		29:  "SchedulePrivateTransfer",
		196: "UndelegationCallback", 201: "Internal(201)", 150: "Unknown(150)",
	}
	for d, n := range want {
		if got := Name(d); got != n {
			t.Errorf("Name(%d) = %q, want %q", d, got, n)
		}
	}
	for d := 0; d <= 31; d++ {
		if Name(uint8(d)) == "" || strings.HasPrefix(Name(uint8(d)), "Unknown") {
			t.Errorf("Name(%d) = %q", d, Name(uint8(d)))
		}
	}
	if IxDepositAndQueueTransfer.String() != "DepositAndQueueTransfer" {
		t.Error("String")
	}
	specs := AccountSpecs(IxDepositAndQueueTransfer)
	if len(specs) != 14 || !specs[12].Optional || specs[11].Optional {
		t.Errorf("ix 16 specs %+v", specs)
	}
	specs[0].Name = "changed"
	if AccountSpecs(IxDepositAndQueueTransfer)[0].Name != "queue" {
		t.Error("AccountSpecs returned the shared table")
	}
	if AccountSpecs(IxSchedulePrivateTransfer) != nil || AccountSpecs(200) != nil {
		t.Error("specs for an unencoded instruction")
	}
}

// TestPrivateTransferHidesDestination: the destination appears neither
// among the account keys nor anywhere in the data, and opens back.
func TestPrivateTransferHidesDestination(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	validator := solana.PublicKeyFromBytes(pub)
	dest := testKey(77)
	ref := uint64(1234)
	ix, err := PrivateTransfer(PrivateTransferArgs{Owner: vOwner, Mint: vMint, Validator: validator, Destination: dest,
		ShuttleID: 3, Amount: 5_000_000, MinDelayMs: 100, MaxDelayMs: 900, Split: 4, ClientRefID: &ref})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ix.Accounts {
		if m.PublicKey == dest {
			t.Fatalf("destination is account %d", i)
		}
	}
	if bytes.Contains(ix.Data, dest[:]) || bytes.Contains(ix.Data, dest[:8]) {
		t.Fatal("destination bytes appear in cleartext")
	}
	if len(ix.Data) != 204 || ix.Data[94] != 1 || !bytes.Equal(ix.Data[95:127], validator[:]) || ix.Data[127] != 76 {
		t.Fatalf("layout: len %d tag %d L %d", len(ix.Data), ix.Data[94], ix.Data[127])
	}
	d := roundTrip(t, ix)
	pt := d.(PrivateTransferIx)
	p, err := OpenPrivateTransfer(priv, pt)
	if err != nil {
		t.Fatal(err)
	}
	if p.Destination != dest || p.MinDelayMs != 100 || p.MaxDelayMs != 900 || p.Split != 4 || p.ClientRefID == nil ||
		*p.ClientRefID != 1234 || p.GroupID != uint24(ix.Data[14:17]) || p.GroupID == 0 || !pt.ExactOut {
		t.Errorf("payload %+v", p)
	}
	// The ER-side ix 16 of post-action (b).
	inner, ok := pt.QueueInstruction(p)
	if !ok || inner.Amount != 5_000_000 || inner.Destination != dest || inner.GroupID != p.GroupID || inner.Split != 4 ||
		*inner.ClientRefID != 1234 || inner.Owner != vOwner || inner.Validate() != nil {
		t.Errorf("inner ix 16 %+v", inner)
	}
	if want, _ := FindGroupReceipt(pt.Queue, vOwner, p.GroupID); inner.GroupReceipt != want {
		t.Error("inner group receipt")
	}
	roundTrip(t, inner.Instruction())
	// Without a clientRefId the suffix opens to the 20-byte form.
	ix2, _ := PrivateTransfer(PrivateTransferArgs{Owner: vOwner, Mint: vMint, Validator: validator, Destination: dest,
		ShuttleID: 3, Amount: 5_000_000})
	d2, _ := DecodeInstruction(ix2)
	p2, err := OpenPrivateTransfer(priv, d2.(PrivateTransferIx))
	if err != nil || p2.ClientRefID != nil || p2.Split != 1 || p2.MinDelayMs != 0 || p2.MaxDelayMs != 0 || len(ix2.Data) != 196 {
		t.Errorf("payload %+v, %v (len %d)", p2, err, len(ix2.Data))
	}
	// A different validator key cannot open it.
	_, other, _ := ed25519.GenerateKey(nil)
	if _, err := OpenPrivateTransfer(other, pt); !errors.Is(err, ErrOpen) {
		t.Errorf("wrong key: %v", err)
	}
}

func TestPrivateTransferLegacyLayout(t *testing.T) {
	ix, err := PrivateTransfer(PrivateTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator,
		Destination: testKey(5), ShuttleID: 9, Amount: 77})
	if err != nil {
		t.Fatal(err)
	}
	// Remove the exactOut byte: the SDK ≤ 0.14 layout.
	legacy := append(append([]byte(nil), ix.Data[:13]...), ix.Data[14:]...)
	if legacy[93] != 1 || int(legacy[126]) != len(legacy)-127 {
		t.Fatal("test did not produce the legacy shape")
	}
	keys := make([]solana.PublicKey, len(ix.Accounts))
	for i, m := range ix.Accounts {
		keys[i] = m.PublicKey
	}
	d, err := Decode(legacy, keys)
	if err != nil {
		t.Fatal(err)
	}
	pt := d.(PrivateTransferIx)
	cur, _ := DecodeInstruction(ix)
	if !pt.LegacyLayout || !pt.ExactOut || pt.ShuttleID != 9 || pt.Amount != 77 ||
		pt.EncryptedDestination != cur.(PrivateTransferIx).EncryptedDestination || *pt.Validator != vValidator {
		t.Errorf("legacy decode %+v", pt)
	}
	if !bytes.Equal(pt.Instruction().Data, legacy) {
		t.Error("legacy re-encoding differs")
	}
	// Option tag 0 (no validator) also decodes.
	noVal := PrivateTransferIx{ShuttleID: 1, Amount: 2, ExactOut: true, EncryptedSuffix: make([]byte, 68)}
	d, err = Decode(noVal.Instruction().Data, keys)
	if err != nil || d.(PrivateTransferIx).Validator != nil {
		t.Errorf("tag-0 decode: %v", err)
	}
}

func TestPrivateTransferValidation(t *testing.T) {
	base := PrivateTransferArgs{Owner: vOwner, Mint: vMint, Validator: vValidator, Destination: testKey(5), Amount: 100}
	bad := []func(a *PrivateTransferArgs){
		func(a *PrivateTransferArgs) { a.Amount = 0 },
		func(a *PrivateTransferArgs) { a.Validator = solana.PublicKey{} },
		func(a *PrivateTransferArgs) { a.Destination = solana.PublicKey{} },
		func(a *PrivateTransferArgs) { a.MinDelayMs, a.MaxDelayMs = 9, 8 },
		func(a *PrivateTransferArgs) { a.Split = 101 },
		func(a *PrivateTransferArgs) { a.Amount, a.Split, a.DeductFee = 1000, 1000, true }, // queued 999
		func(a *PrivateTransferArgs) { a.Amount = ^uint64(0) },                             // amount + fee overflows
	}
	for i, f := range bad {
		a := base
		f(&a)
		if _, err := PrivateTransfer(a); !errors.Is(err, ErrInvalidInstruction) {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
	// A validator key that is not a curve point cannot be a recipient.
	a := base
	a.Validator = solana.MustPublicKeyFromBase58("4RvdEGaUyChj3AketeBZoY1EotNtPveMFUXL8DVetrAp") // the rent PDA: off curve
	if _, err := PrivateTransfer(a); !errors.Is(err, ErrInvalidRecipient) {
		t.Errorf("off-curve validator: %v", err)
	}
}

func TestStealthInstructionValidation(t *testing.T) {
	dests := []solana.PublicKey{testKey(1)}
	for name, a := range map[string]UpdateStealthPoolArgs{
		"empty handle":    {Handle: nil, Destinations: dests},
		"long handle":     {Handle: bytes.Repeat([]byte("a"), 256), Destinations: dests},
		"bad utf-8":       {Handle: []byte{0xff, 0xfe}, Destinations: dests},
		"unknown flag":    {Handle: []byte("a"), Flags: 2, Destinations: dests},
		"no destinations": {Handle: []byte("a")},
		"11 destinations": {Handle: []byte("a"), Destinations: make([]solana.PublicKey, 11)},
		"zero key":        {Handle: []byte("a"), Destinations: []solana.PublicKey{{}}},
	} {
		if _, err := UpdateStealthPool(a); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := EnsureStealthPoolDelegated(EnsureStealthPoolDelegatedArgs{Handle: []byte{}}); err == nil {
		t.Error("ix 22 with an empty handle accepted")
	}
	// 255-byte handle works end to end.
	h := bytes.Repeat([]byte("é"), 127)
	h = append(h, 'x')
	ix, err := UpdateStealthPool(UpdateStealthPoolArgs{Payer: testKey(1), Authority: testKey(2), Handle: h, Destinations: dests})
	if err != nil {
		t.Fatal(err)
	}
	d := roundTrip(t, ix)
	if !bytes.Equal(d.(UpdateStealthPoolIx).Handle, h) {
		t.Error("handle changed")
	}
}
