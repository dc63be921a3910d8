package ledger

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/gagliardetto/solana-go"
)

// The validator as the RPC sees it.
//
// A ferry ledger has one node: it is the leader of every slot and
// produces every block. With Config.ValidatorStake, genesis also holds
// what solana-test-validator's does: a vote account for the node identity
// and a stake account delegated to it. No vote or stake program runs, so
// the vote account keeps its genesis data and no vote transactions land;
// instead the node's votes are derived from the ledger's commitment marks,
// which is what a lone validator's votes would produce:
//
//   - the node votes for each slot when it becomes confirmed (durable), so
//     its last vote is the confirmed slot and its root the finalized one;
//   - a vote on slot s has confirmation count confirmed - s + 1 until s is
//     finalized (getBlockCommitment);
//   - each finalized slot earns VoteCreditsPerSlot credits, the most a
//     timely vote earns (epochCredits).

// Sizes of Agave's vote (VoteStateVersions::V3) and stake (StakeStateV2)
// account data.
const (
	VoteAccountSize  = 3762
	StakeAccountSize = 200
)

// VoteCreditsPerSlot is what a vote landing in the next slot earns under
// timely vote credits (Agave's VOTE_CREDITS_MAXIMUM_PER_SLOT).
const VoteCreditsPerSlot = 16

// maxLockoutHistory is the depth of Agave's vote tower
// (MAX_LOCKOUT_HISTORY); a block commitment array has one more entry, for
// rooted stake.
const maxLockoutHistory = 31

// Seeds of the validator accounts, derived from the identity with
// CreateWithSeed so that they are stable and need no key of their own.
const (
	voteAccountSeed  = "vote"
	stakeAccountSeed = "stake"
)

// ValidatorVoteAccount is the address of the vote account genesis creates
// for identity (Config.ValidatorStake).
func ValidatorVoteAccount(identity solana.PublicKey) solana.PublicKey {
	k, _ := solana.CreateWithSeed(identity, voteAccountSeed, solana.VoteProgramID)
	return k
}

// ValidatorStakeAccount is the address of the stake account genesis
// creates for identity (Config.ValidatorStake).
func ValidatorStakeAccount(identity solana.PublicKey) solana.PublicKey {
	k, _ := solana.CreateWithSeed(identity, stakeAccountSeed, solana.StakeProgramID)
	return k
}

// validatorAccounts are the genesis vote and stake accounts, or none
// without Config.ValidatorStake. The identity is the node, the authorized
// voter and withdrawer, and the staker; commission is 0 as in
// solana-test-validator's genesis.
func (l *Ledger) validatorAccounts() []AccountWrite {
	stake := l.cfg.ValidatorStake
	if stake == 0 {
		return nil
	}
	id := l.Identity()
	vote := ValidatorVoteAccount(id)
	reserve := l.cfg.Rent.MinimumBalance(StakeAccountSize)
	return []AccountWrite{
		{Key: vote, Account: &Account{
			Lamports: l.cfg.Rent.MinimumBalance(VoteAccountSize), Owner: solana.VoteProgramID,
			Data: voteStateData(id, id), RentEpoch: math.MaxUint64,
		}},
		{Key: ValidatorStakeAccount(id), Account: &Account{
			Lamports: satAdd(stake, reserve), Owner: solana.StakeProgramID,
			Data: stakeStateData(id, vote, reserve, stake), RentEpoch: math.MaxUint64,
		}},
	}
}

// voteStateData is VoteStateVersions::V3 for a new vote account: node,
// withdrawer, commission 0, no votes, no root, authority as the voter for
// epoch 0, empty prior voters and credits, zero timestamp, padded.
func voteStateData(node, authority solana.PublicKey) []byte {
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, VoteAccountSize), 2) // V3
	b = append(b, node[:]...)
	b = append(b, authority[:]...)             // authorized_withdrawer
	b = append(b, 0)                           // commission
	b = binary.LittleEndian.AppendUint64(b, 0) // votes: empty
	b = append(b, 0)                           // root_slot: None
	b = binary.LittleEndian.AppendUint64(b, 1) // authorized_voters: {0: authority}
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, authority[:]...)
	b = append(b, make([]byte, 32*48)...)       // prior_voters.buf
	b = binary.LittleEndian.AppendUint64(b, 31) // prior_voters.idx
	b = append(b, 1)                            // prior_voters.is_empty
	b = binary.LittleEndian.AppendUint64(b, 0)  // epoch_credits: empty
	b = append(b, make([]byte, 16)...)          // last_timestamp
	return b[:VoteAccountSize:VoteAccountSize]
}

// stakeStateData is StakeStateV2::Stake for a genesis delegation:
// authority as staker and withdrawer, no lockup, stake delegated to voter
// since genesis (activation epoch u64::MAX marks bootstrap stake, active
// from the start), warmup rate 0.25.
func stakeStateData(authority, voter solana.PublicKey, reserve, stake uint64) []byte {
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, StakeAccountSize), 2) // Stake
	b = binary.LittleEndian.AppendUint64(b, reserve)
	b = append(b, authority[:]...)     // staker
	b = append(b, authority[:]...)     // withdrawer
	b = append(b, make([]byte, 48)...) // lockup: none
	b = append(b, voter[:]...)
	b = binary.LittleEndian.AppendUint64(b, stake)
	b = binary.LittleEndian.AppendUint64(b, math.MaxUint64) // activation epoch
	b = binary.LittleEndian.AppendUint64(b, math.MaxUint64) // deactivation epoch
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(0.25))
	b = binary.LittleEndian.AppendUint64(b, 0) // credits_observed
	b = append(b, 0)                           // stake flags
	return append(b, make([]byte, StakeAccountSize-len(b))...)
}

// Offsets into the account data the decoders read.
const (
	voteNode        = 4   // node_pubkey (V1_14_11 and V3)
	voteCommission  = 68  // commission
	stakeVoter      = 124 // delegation.voter_pubkey
	stakeAmount     = 156 // delegation.stake
	stakeActivation = 164 // delegation.activation_epoch
	stakeDeactivate = 172 // delegation.deactivation_epoch
)

// EpochCredits is one epoch's entry of a vote account's credits:
// cumulative credits at its end and at the end of the one before.
type EpochCredits struct {
	Epoch, Credits, PrevCredits uint64
}

// VoteAccount is a vote account as getVoteAccounts reports it.
type VoteAccount struct {
	Vote, Node     solana.PublicKey
	Commission     uint8
	ActivatedStake uint64
	// LastVote, RootSlot and EpochCredits are the node's own votes (see
	// the package comment in validator.go); zero for vote accounts of
	// other nodes, which never vote here.
	LastVote, RootSlot uint64
	EpochCredits       []EpochCredits
}

// maxEpochCredits is how many epochs of credits getVoteAccounts returns
// (Agave's MAX_RPC_VOTE_ACCOUNT_INFO_EPOCH_CREDITS_HISTORY).
const maxEpochCredits = 5

// VoteAccounts lists the vote accounts at a commitment level with the
// stake delegated to them, sorted by address, and the slot the read
// reflects.
func (l *Ledger) VoteAccounts(c Commitment) ([]VoteAccount, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	cut := l.cutoff(c)
	votes := l.voteAccountsLocked(cut)
	for i := range votes {
		v := &votes[i]
		if v.Node != l.Identity() {
			continue
		}
		v.LastVote, v.RootSlot = l.confirmed.slot, l.finalized.slot
		v.EpochCredits = l.epochCredits(v.RootSlot)
	}
	return votes, cut
}

// voteAccountsLocked decodes the vote accounts and sums the active stake
// delegated to each. Callers hold mu.
func (l *Ledger) voteAccountsLocked(cut uint64) []VoteAccount {
	epoch := cut / l.cfg.SlotsPerEpoch
	stakes := map[solana.PublicKey]uint64{}
	read := l.readerAt(cut, l.indexSize(byProgram, solana.StakeProgramID))
	l.eachIndexed(byProgram, solana.StakeProgramID, func(k solana.PublicKey) {
		a := read(k)
		if a == nil || a.Owner != solana.StakeProgramID || len(a.Data) < StakeAccountSize || binary.LittleEndian.Uint32(a.Data) != 2 {
			return
		}
		d := a.Data
		act, deact := binary.LittleEndian.Uint64(d[stakeActivation:]), binary.LittleEndian.Uint64(d[stakeDeactivate:])
		// No warmup or cooldown is modelled: stake counts from the epoch
		// after activation (bootstrap stake, u64::MAX, from genesis) until
		// its deactivation epoch.
		if (act != math.MaxUint64 && act >= epoch) || deact <= epoch {
			return
		}
		voter := solana.PublicKeyFromBytes(d[stakeVoter : stakeVoter+32])
		stakes[voter] = satAdd(stakes[voter], binary.LittleEndian.Uint64(d[stakeAmount:]))
	})
	var out []VoteAccount
	read = l.readerAt(cut, l.indexSize(byProgram, solana.VoteProgramID))
	l.eachIndexed(byProgram, solana.VoteProgramID, func(k solana.PublicKey) {
		a := read(k)
		if a == nil || a.Owner != solana.VoteProgramID || len(a.Data) <= voteCommission {
			return
		}
		if v := binary.LittleEndian.Uint32(a.Data); v != 1 && v != 2 { // V1_14_11, V3
			return
		}
		out = append(out, VoteAccount{
			Vote: k, Node: solana.PublicKeyFromBytes(a.Data[voteNode : voteNode+32]),
			Commission: a.Data[voteCommission], ActivatedStake: stakes[k],
		})
	})
	slices.SortFunc(out, func(a, b VoteAccount) int { return compareKeys(a.Vote, b.Vote) })
	return out
}

// epochCredits are the node's credits through root, the last
// maxEpochCredits epochs that earned any. Slot 0 (genesis) is not voted
// on.
func (l *Ledger) epochCredits(root uint64) []EpochCredits {
	if root == 0 {
		return nil
	}
	n := l.cfg.SlotsPerEpoch
	last := root / n
	first := uint64(0)
	if last >= maxEpochCredits {
		first = last - maxEpochCredits + 1
	}
	credits := func(through uint64) uint64 { return through * VoteCreditsPerSlot } // slots 1..through
	var out []EpochCredits
	for e := first; e <= last; e++ {
		var prev uint64
		if e > 0 {
			prev = credits(e*n - 1)
		}
		out = append(out, EpochCredits{Epoch: e, Credits: credits(min(root, (e+1)*n-1)), PrevCredits: prev})
	}
	return out
}

// BlockCommitment is getBlockCommitment: the node's vote stake on slot
// at each confirmation count (index count-1) and, at index 31, stake that
// has rooted it, plus the total active stake. The array is nil when no
// stake has voted on the slot: it is not confirmed yet, the node has no
// stake, or it is older than the recent blocks the node keeps commitment
// for (like Agave's, which only covers its status-cache ancestors).
func (l *Ledger) BlockCommitment(slot uint64) (*[maxLockoutHistory + 1]uint64, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var total, mine uint64
	for _, v := range l.voteAccountsLocked(l.finalized.slot) {
		total = satAdd(total, v.ActivatedStake)
		if v.Node == l.Identity() {
			mine = satAdd(mine, v.ActivatedStake)
		}
	}
	conf := l.confirmed.slot
	if mine == 0 || slot > conf || l.headerAt(slot) == nil {
		return nil, total
	}
	var out [maxLockoutHistory + 1]uint64
	if slot <= l.finalized.slot {
		out[maxLockoutHistory] = mine
	} else {
		out[min(conf-slot+1, maxLockoutHistory)-1] = mine
	}
	return &out, total
}

// ProducedBlocks counts the blocks this node produced in [first, last]:
// the durable ones in history and the frozen ones on their way there.
func (l *Ledger) ProducedBlocks(first, last uint64) (uint64, error) {
	if first > last {
		return 0, nil
	}
	l.mu.RLock()
	conf := l.confirmed.slot
	var n uint64
	for _, h := range l.recent {
		if h.slot > conf && h.slot >= first && h.slot <= last {
			n++
		}
	}
	l.mu.RUnlock()
	if first > conf {
		return n, nil
	}
	durable, err := l.store.countBlocks(first, min(last, conf))
	if err != nil {
		return 0, err
	}
	return n + durable, nil
}
