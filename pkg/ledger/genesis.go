package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Well-known ids the bank uses besides those in pkg/spl.
var (
	SysvarOwnerID = solana.MustPublicKeyFromBase58("Sysvar1111111111111111111111111111111111111")
	// BPFLoader2ID owns the deployed SPL programs on real clusters.
	BPFLoader2ID = solana.MustPublicKeyFromBase58("BPFLoader2111111111111111111111111111111111")
	// BPFLoaderDeprecatedID is the original BPF loader.
	BPFLoaderDeprecatedID = solana.MustPublicKeyFromBase58("BPFLoader1111111111111111111111111111111111")
)

// reservedKeys are accounts no transaction may write (Agave's reserved
// account keys that matter here): builtin programs, loaders and sysvars.
// A message that marks one writable is silently demoted to read-only.
var reservedKeys = map[solana.PublicKey]bool{
	spl.SystemProgramID:                  true,
	runtime.ComputeBudgetProgramID:       true,
	runtime.NativeLoaderID:               true,
	runtime.BPFLoaderUpgradeableID:       true,
	BPFLoader2ID:                         true,
	BPFLoaderDeprecatedID:                true,
	SysvarOwnerID:                        true,
	spl.SysvarRentID:                     true,
	spl.SysvarClockID:                    true,
	solana.SysVarEpochSchedulePubkey:     true,
	solana.SysVarEpochRewardsPubkey:      true,
	solana.SysVarFeesPubkey:              true,
	solana.SysVarInstructionsPubkey:      true,
	solana.SysVarLastRestartSlotPubkey:   true,
	solana.SysVarRecentBlockHashesPubkey: true,
	solana.SysVarRewardsPubkey:           true,
	solana.SysVarSlotHashesPubkey:        true,
	solana.SysVarSlotHistoryPubkey:       true,
	solana.SysVarStakeHistoryPubkey:      true,
}

// RentSysvarData is the Rent sysvar layout: lamports_per_byte_year u64,
// exemption_threshold f64, burn_percent u8. Agave's legacy values are
// 3480 lamports per byte-year and a 2-year threshold; the product is
// runtime.Rent.LamportsPerByte.
func RentSysvarData(r runtime.Rent) []byte {
	perYear, threshold := r.LamportsPerByte/2, 2.0
	if r.LamportsPerByte%2 != 0 {
		perYear, threshold = r.LamportsPerByte, 1.0
	}
	b := binary.LittleEndian.AppendUint64(nil, perYear)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(threshold))
	return append(b, 50)
}

// ClockSysvarData is the Clock sysvar layout: slot, epoch_start_timestamp,
// epoch, leader_schedule_epoch, unix_timestamp.
func ClockSysvarData(slot uint64, epochStart int64, epoch uint64, unix int64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, slot)
	b = binary.LittleEndian.AppendUint64(b, uint64(epochStart))
	b = binary.LittleEndian.AppendUint64(b, epoch)
	b = binary.LittleEndian.AppendUint64(b, epoch+1)
	return binary.LittleEndian.AppendUint64(b, uint64(unix))
}

func sysvarAccount(rent runtime.Rent, data []byte) *Account {
	return &Account{Lamports: max(rent.MinimumBalance(len(data)), 1), Owner: SysvarOwnerID, Data: data, RentEpoch: math.MaxUint64}
}

// programAccounts returns the executable accounts of a registered program.
// Builtins are owned by the native loader and hold their name, as on a
// real cluster; other programs look like upgradeable BPF deployments: a
// Program account pointing at a ProgramData account.
func programAccounts(reg *runtime.Registration, rent runtime.Rent) []AccountWrite {
	if reg.Builtin {
		data := []byte(reg.Name)
		return []AccountWrite{{Key: reg.ID, Account: &Account{
			Lamports: max(rent.MinimumBalance(len(data)), 1), Owner: runtime.NativeLoaderID,
			Data: data, Executable: true, RentEpoch: math.MaxUint64,
		}}}
	}
	pd, _, _ := solana.FindProgramAddress([][]byte{reg.ID[:]}, runtime.BPFLoaderUpgradeableID)
	prog := binary.LittleEndian.AppendUint32(nil, 2) // UpgradeableLoaderState::Program
	prog = append(prog, pd[:]...)
	// UpgradeableLoaderState::ProgramData { slot: 0, upgrade_authority: None }
	// followed by no code: the program runs natively.
	pdata := binary.LittleEndian.AppendUint32(nil, 3)
	pdata = binary.LittleEndian.AppendUint64(pdata, 0)
	pdata = append(pdata, 0)
	return []AccountWrite{
		{Key: reg.ID, Account: &Account{
			Lamports: rent.MinimumBalance(len(prog)), Owner: runtime.BPFLoaderUpgradeableID,
			Data: prog, Executable: true, RentEpoch: math.MaxUint64,
		}},
		{Key: pd, Account: &Account{
			Lamports: rent.MinimumBalance(len(pdata)), Owner: runtime.BPFLoaderUpgradeableID,
			Data: pdata, RentEpoch: math.MaxUint64,
		}},
	}
}

// genesisAccounts lists the accounts of slot 0, later entries replacing
// earlier ones with the same key.
func (l *Ledger) genesisAccounts(now int64) []AccountWrite {
	cfg := &l.cfg
	var out []AccountWrite
	out = append(out, AccountWrite{Key: pubkeyOf(l.faucet), Account: &Account{
		Lamports: cfg.FaucetLamports, Owner: spl.SystemProgramID, RentEpoch: math.MaxUint64,
	}})
	for _, reg := range l.registrations {
		out = append(out, programAccounts(reg, cfg.Rent)...)
	}
	out = append(out, l.programGenesisAccounts()...)
	out = append(out,
		AccountWrite{Key: spl.SysvarRentID, Account: sysvarAccount(cfg.Rent, RentSysvarData(cfg.Rent))},
		AccountWrite{Key: spl.SysvarClockID, Account: sysvarAccount(cfg.Rent, ClockSysvarData(0, now, 0, now))},
	)
	out = append(out, l.validatorAccounts()...)
	for _, g := range cfg.Genesis {
		a := g.Account.Clone()
		out = append(out, AccountWrite{Key: g.Key, Account: a})
	}
	// Deduplicate, keeping the last value of each key.
	seen := map[solana.PublicKey]int{}
	var dedup []AccountWrite
	for _, w := range out {
		if i, ok := seen[w.Key]; ok {
			dedup[i] = w
			continue
		}
		seen[w.Key] = len(dedup)
		dedup = append(dedup, w)
	}
	slices.SortFunc(dedup, func(a, b AccountWrite) int { return compareKeys(a.Key, b.Key) })
	return dedup
}

// programGenesisAccounts are the accounts the registered builtin
// programs expect on any cluster (programs.GenesisAccounts: the native
// mints), those whose owning program this ledger runs, sorted by key.
func (l *Ledger) programGenesisAccounts() []AccountWrite {
	var out []AccountWrite
	for k, a := range programs.GenesisAccounts(l.cfg.Rent) {
		if slices.ContainsFunc(l.registrations, func(r *runtime.Registration) bool { return r.ID == a.Owner }) {
			out = append(out, AccountWrite{Key: k, Account: a})
		}
	}
	slices.SortFunc(out, func(a, b AccountWrite) int { return compareKeys(a.Key, b.Key) })
	return out
}

// addMissingProgramAccounts gives a resumed ledger the program genesis
// accounts it lacks because it was created before ferry had them (the
// native mints): each missing one is written once, through Apply, so it
// is persisted and listed in the block like any privileged write, and the
// history before it is left as it was. An address that holds only lamports
// (SOL sent there while the account did not exist) becomes the account,
// as Agave's reconfiguration of the native mint on running clusters did,
// with the larger of its lamports and the genesis balance. An address
// holding anything else is left alone and logged.
func (l *Ledger) addMissingProgramAccounts(ctx context.Context) error {
	want := l.programGenesisAccounts()
	missing := false
	for _, w := range want {
		if a, _ := l.Account(w.Key, Processed); a == nil || isBareSystemAccount(a) {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	var added []solana.PublicKey
	_, err := l.Apply(ctx, func(aw AccountWriter) error {
		for _, w := range want {
			cur := aw.Get(w.Key)
			switch {
			case cur == nil:
			case isBareSystemAccount(cur):
				w.Account = w.Account.Clone()
				w.Account.Lamports = max(w.Account.Lamports, cur.Lamports)
			default:
				if cur.Owner != w.Account.Owner {
					l.log.Warn("program genesis account is taken", "account", w.Key, "owner", cur.Owner)
				}
				continue
			}
			aw.Set(w.Key, w.Account)
			added = append(added, w.Key)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add program genesis accounts: %w", err)
	}
	for _, k := range added {
		l.log.Info("added program genesis account missing from this ledger", "account", k)
	}
	return nil
}

// isBareSystemAccount reports whether a is a plain System account with no
// data: lamports parked at an address, nothing else.
func isBareSystemAccount(a *Account) bool {
	return a.Owner == spl.SystemProgramID && len(a.Data) == 0 && !a.Executable
}

// genesisHash identifies a new ledger: its name, creation time and the
// genesis accounts. Two ledgers created in one process therefore differ.
func genesisHash(name string, created int64, accounts []AccountWrite) solana.Hash {
	h := sha256.New()
	h.Write([]byte("ferry-genesis\x00"))
	h.Write([]byte(name))
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(created)))
	for _, w := range accounts {
		h.Write(w.Key[:])
		h.Write(encodeAccount(w.Account))
	}
	var out solana.Hash
	copy(out[:], h.Sum(nil))
	return out
}

// nextBlockhash chains blockhashes: sha256(previous | slot | signatures).
func nextBlockhash(prev solana.Hash, slot uint64, txs []*TxRecord) solana.Hash {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(binary.LittleEndian.AppendUint64(nil, slot))
	for _, r := range txs {
		h.Write(r.Signature[:])
	}
	var out solana.Hash
	copy(out[:], h.Sum(nil))
	return out
}
