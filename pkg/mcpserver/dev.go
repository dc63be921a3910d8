package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/devchain"
)

// Development tools: the cheatcodes and rollup controls of `ferry serve`
// in local mode (Config.Dev). They take the same requests as the chain
// nodes' JSON-RPC methods and `ferry dev`.
const (
	ToolDevSetAccount        = "dev.setAccount"
	ToolDevSetTokenAccount   = "dev.setTokenAccount"
	ToolDevSetMint           = "dev.setMint"
	ToolDevResetAccount      = "dev.resetAccount"
	ToolDevProfile           = "dev.profileTransaction"
	ToolDevExportSnapshot    = "dev.exportSnapshot"
	ToolDevImportSnapshot    = "dev.importSnapshot"
	ToolDevHaltLedger        = "dev.haltLedger"
	ToolDevCommitAccount     = "dev.commitAccount"
	ToolDevUndelegateAccount = "dev.undelegateAccount"
	ToolDevCrankQueue        = "dev.crankQueue"
	ToolDevGetQueue          = "dev.getQueue"
	ToolDevTimeTravel        = "dev.timeTravel"
	ToolDevAdvanceClock      = "dev.advanceClock"
	ToolDevPauseClock        = "dev.pauseClock"
	ToolDevResumeClock       = "dev.resumeClock"
	ToolDevSetBlockMode      = "dev.setBlockProductionMode"
	ToolDevMineBlocks        = "dev.mineBlocks"
	ToolDevGetClock          = "dev.getClock"
)

// CodeCheatcodeRefused (400) is a development tool refusing its input; the
// details carry the JSON-RPC code and data the chain node would answer.
const CodeCheatcodeRefused = "CHEATCODE_REFUSED"

// DevSetAccountRequest is the input of dev.setAccount.
type DevSetAccountRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to change: base (the Solana layer) or ephemeral (the rollup)."`
	devchain.SetAccountRequest
}

// DevSetTokenAccountRequest is the input of dev.setTokenAccount.
type DevSetTokenAccountRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to change: base (the Solana layer) or ephemeral (the rollup)."`
	devchain.SetTokenAccountRequest
}

// DevSetMintRequest is the input of dev.setMint.
type DevSetMintRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to change: base (the Solana layer) or ephemeral (the rollup)."`
	devchain.SetMintRequest
}

// DevResetAccountRequest is the input of dev.resetAccount.
type DevResetAccountRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to change: base (the Solana layer) or ephemeral (the rollup)."`
	devchain.ResetAccountRequest
}

// DevProfileRequest is the input of dev.profileTransaction.
type DevProfileRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to simulate on: base or ephemeral."`
	devchain.ProfileRequest
}

// DevExportRequest is the input of dev.exportSnapshot.
type DevExportRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to read: base or ephemeral."`
	devchain.ExportRequest
}

// DevImportRequest is the input of dev.importSnapshot.
type DevImportRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to change: base (the Solana layer) or ephemeral (the rollup)."`
	// Accounts is a snapshot: address → {lamports, owner, executable,
	// rentEpoch, data (base64)}, surfpool's format.
	Accounts map[string]any `json:"accounts" validate:"required" doc:"Snapshot in surfpool's format: address to {lamports, owner, executable, rentEpoch, data (base64)}, as dev.exportSnapshot returns it."`
}

// DevHaltRequest is the input of dev.haltLedger.
type DevHaltRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node to halt: base or ephemeral."`
	devchain.HaltRequest
}

// DevTimeTravelRequest is the input of dev.timeTravel.
type DevTimeTravelRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node whose clock moves: base or ephemeral."`
	devchain.TimeTravelRequest
}

// DevAdvanceClockRequest is the input of dev.advanceClock.
type DevAdvanceClockRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node whose clock moves: base or ephemeral (the rollup clock, which the transfer queue's due times are judged against)."`
	devchain.AdvanceClockRequest
}

// DevClockRequest is the input of the clock tools that take only a node.
type DevClockRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node: base or ephemeral."`
}

// DevBlockModeRequest is the input of dev.setBlockProductionMode.
type DevBlockModeRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node: base or ephemeral."`
	Mode  string `json:"mode" validate:"required,enum=clock|transaction|manual" doc:"clock: a block per slot tick (default); transaction: a block per transaction; manual: blocks only when mined."`
}

// DevMineRequest is the input of dev.mineBlocks.
type DevMineRequest struct {
	Layer string `json:"layer,omitempty" validate:"enum=base|ephemeral" default:"base" doc:"Chain node: base or ephemeral."`
	Count int    `json:"count,omitempty" validate:"min=0" default:"1" doc:"Blocks to produce now, 1 to 1024."`
}

// wroteText is the result text of a state tool.
func wroteText(what string, out *devchain.WriteResult) string {
	return fmt.Sprintf("%s on %s in slot %d: %d account(s) written.", what, out.Node, out.Slot, len(out.Accounts))
}

// looseObject is the output schema of results holding arbitrary JSON
// (rendered accounts, transaction errors).
func looseObject(desc string) map[string]any {
	return map[string]any{"type": "object", "description": desc}
}

var cheats = &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no}

// node picks the chain node a state tool acts on.
func (h *Handler) devNode(layer string) (*devchain.Node, error) {
	if n := h.dev.Node(layer); n != nil {
		return n, nil
	}
	return nil, apierr.Validation(apierr.Issue{Code: "custom", Message: "Unknown layer", Path: []any{"layer"}})
}

// devTools are the development tools (nil without Config.Dev).
func (h *Handler) devTools() []*tool {
	if h.dev == nil {
		return nil
	}
	tools := []*tool{
		typed(ToolDevSetAccount, "Set Account (cheatcode)",
			"Set an account's lamports, owner, data, executable flag on a local chain node at once (surfnet_setAccount), "+
				"creating it if needed. Absent fields keep their value; lamports 0 deletes the account.",
			cheats, func(req *DevSetAccountRequest, out *devchain.WriteResult) string {
				return wroteText("Set the account", out)
			},
			func(ctx context.Context, req *DevSetAccountRequest, _ auth.Bearer) (*devchain.WriteResult, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				return devResult(n.SetAccount(ctx, req.SetAccountRequest))
			}),
		typed(ToolDevSetTokenAccount, "Set Token Account (cheatcode)",
			"Set the balance, delegate, state, delegated amount or close authority of a wallet's associated token account for a mint "+
				"(SPL Token or Token-2022), creating the account if needed (surfnet_setTokenAccount). The mint's supply moves with the "+
				"balance; on the ephemeral layer the base vault backing the rollup moves too.",
			cheats, func(req *DevSetTokenAccountRequest, out *devchain.WriteResult) string {
				return wroteText("Set the token account", out)
			},
			func(ctx context.Context, req *DevSetTokenAccountRequest, _ auth.Bearer) (*devchain.WriteResult, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				return devResult(n.SetTokenAccount(ctx, req.SetTokenAccountRequest))
			}),
		typed(ToolDevSetMint, "Set Mint (cheatcode)",
			"Set a mint's supply, decimals, mint or freeze authority (\"null\" removes one), or create a mint at any address "+
				"(give decimals), e.g. a real cluster's USDC address (ferry_setMint).",
			cheats, func(req *DevSetMintRequest, out *devchain.WriteResult) string { return wroteText("Set the mint", out) },
			func(ctx context.Context, req *DevSetMintRequest, _ auth.Bearer) (*devchain.WriteResult, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				return devResult(n.SetMint(ctx, req.SetMintRequest))
			}),
		typed(ToolDevResetAccount, "Reset Account (cheatcode)",
			"Put an account back where the chain started: its genesis value (programs, native mints, the faucet), or deleted "+
				"(surfnet_resetAccount). includeOwnedAccounts also resets the accounts it owns.",
			cheats, func(req *DevResetAccountRequest, out *devchain.WriteResult) string { return wroteText("Reset", out) },
			func(ctx context.Context, req *DevResetAccountRequest, _ auth.Bearer) (*devchain.WriteResult, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				return devResult(n.ResetAccount(ctx, req.ResetAccountRequest))
			}),
		typedOutput(ToolDevProfile, "Profile Transaction",
			"Simulate a transaction without committing it and report compute units, logs, error and account changes, in total and "+
				"per instruction (surfnet_profileTransaction's result).",
			readOnlyClosed, looseObject("surfpool's UiKeyedProfileResult: slot, key, instructionProfiles, transactionProfile, readonlyAccountStates."),
			func(req *DevProfileRequest, out *devchain.Profile) string {
				return fmt.Sprintf("Profiled the transaction on %s: %d compute units, %d instruction profile(s).",
					orDefault(req.Layer, devchain.NodeBase), out.TransactionProfile.ComputeUnitsConsumed, len(out.InstructionProfiles))
			},
			func(ctx context.Context, req *DevProfileRequest, _ auth.Bearer) (*devchain.Profile, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				return devResult(n.ProfileTransaction(ctx, req.ProfileRequest))
			}),
		typedOutput(ToolDevExportSnapshot, "Export Snapshot",
			"Export accounts of a local chain node in surfpool's snapshot format (address to lamports, owner, executable, rentEpoch, "+
				"base64 data, parsedData): the named accounts, those a transaction references, or every account.",
			readOnlyClosed, looseObject("node, slot, and accounts: address to account."),
			func(_ *DevExportRequest, out *devchain.ExportResult) string {
				return fmt.Sprintf("Exported %d account(s) from %s at slot %d.", len(out.Accounts), out.Node, out.Slot)
			},
			func(ctx context.Context, req *DevExportRequest, _ auth.Bearer) (*devchain.ExportResult, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				return devResult(n.ExportSnapshot(ctx, req.ExportRequest))
			}),
		typed(ToolDevImportSnapshot, "Import Snapshot (cheatcode)",
			"Write every account of a snapshot (surfpool's format, as dev.exportSnapshot returns) to a local chain node in one "+
				"privileged write; sysvars are skipped.",
			cheats, func(_ *DevImportRequest, out *devchain.ImportResult) string {
				return fmt.Sprintf("Imported %d account(s) into %s in slot %d; %d skipped.", len(out.Accounts), out.Node, out.Slot, len(out.Skipped))
			},
			func(ctx context.Context, req *DevImportRequest, _ auth.Bearer) (*devchain.ImportResult, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(req.Accounts)
				if err != nil {
					return nil, apierr.Internal(err)
				}
				snap, err := devchain.ParseSnapshot(b)
				if err != nil {
					return nil, apierr.Validation(apierr.Issue{Code: "custom", Message: err.Error(), Path: []any{"accounts"}})
				}
				return devResult(n.ImportSnapshot(ctx, snap))
			}),
		typed(ToolDevHaltLedger, "Halt Ledger (cheatcode)",
			"Make a local chain node fail every later slot commit, as a full disk would, to test how an application handles a "+
				"halted node (ferry_haltLedger). Restarting ferry serve recovers.",
			cheats, func(_ *DevHaltRequest, out *devchain.HaltResult) string { return "The node halts: " + out.Halting },
			func(ctx context.Context, req *DevHaltRequest, _ auth.Bearer) (*devchain.HaltResult, error) {
				n, err := h.devNode(req.Layer)
				if err != nil {
					return nil, err
				}
				return devResult(n.Halt(ctx, req.HaltRequest))
			}),
	}
	tools = append(tools, h.clockTools()...)
	r := h.dev.Rollup
	if r == nil {
		return tools
	}
	rolled := func(what string) func(*devchain.AccountRequest, *devchain.RollupResult) string {
		return func(_ *devchain.AccountRequest, out *devchain.RollupResult) string {
			return fmt.Sprintf("%s %s (%s of %s) with %s; %d validator transaction(s).", what, out.Account, out.Owner, out.Mint, out.Amount, len(out.Transactions))
		}
	}
	rollupOut := looseObject("account, owner, mint, amount (base units), intent, and the transactions the validator sent.")
	return append(tools,
		typedOutput(ToolDevCommitAccount, "Commit Now (rollup control)",
			"Commit a delegated eATA's rollup balance to the base layer now (DLP CommitState, signed by the local validator); "+
				"it stays delegated (ferry_commitAccount).",
			cheats, rollupOut, rolled("Committed"),
			func(ctx context.Context, req *devchain.AccountRequest, _ auth.Bearer) (*devchain.RollupResult, error) {
				return devResult(r.Commit(ctx, *req))
			}),
		typedOutput(ToolDevUndelegateAccount, "Undelegate Now (rollup control)",
			"Commit a delegated eATA and return it to the base layer now, without its owner's signature, as eSPL ix 5 would "+
				"(ferry_undelegateAccount).",
			cheats, rollupOut, rolled("Undelegated"),
			func(ctx context.Context, req *devchain.AccountRequest, _ auth.Bearer) (*devchain.RollupResult, error) {
				return devResult(r.Undelegate(ctx, *req))
			}),
		typedOutput(ToolDevCrankQueue, "Crank Now (rollup control)",
			"Settle queued private payouts now, whatever their delay: their ready time is brought forward to the rollup clock, "+
				"then the validator cranks and pays them on base (ferry_crankQueue).",
			cheats, looseObject("settled: the payouts settled; transactions: what the validator sent."),
			func(_ *devchain.CrankRequest, out *devchain.CrankResult) string {
				return fmt.Sprintf("Settled %d queued payout(s); %d validator transaction(s).", len(out.Settled), len(out.Transactions))
			},
			func(ctx context.Context, req *devchain.CrankRequest, _ auth.Bearer) (*devchain.CrankResult, error) {
				return devResult(r.Crank(ctx, *req))
			}),
		typed(ToolDevGetQueue, "Show Transfer Queues",
			"List the local rollup's transfer queues: queued private payouts with their amounts, recipients, due times (rollup "+
				"clock), group and split piece, and state (pending, ready, or paying on base) (ferry_getQueue).",
			readOnlyClosed, func(_ *devchain.QueueRequest, out *devchain.QueueView) string {
				n := 0
				for _, q := range out.Queues {
					n += len(q.Entries)
				}
				return fmt.Sprintf("%d transfer queue(s), %d payout(s) waiting.", len(out.Queues), n)
			},
			func(ctx context.Context, req *devchain.QueueRequest, _ auth.Bearer) (*devchain.QueueView, error) {
				return devResult(r.Queue(ctx, *req))
			}),
	)
}

// clockTools are the clock controls of both nodes.
func (h *Handler) clockTools() []*tool {
	clockText := func(what string, v *devchain.ClockView) string {
		state := "running"
		if v.Paused {
			state = "paused"
		}
		return fmt.Sprintf("%s: %s at slot %d (epoch %d), unix time %d, clock %s, block production %s.",
			what, v.Node, v.AbsoluteSlot, v.Epoch, v.UnixTimestamp, state, v.BlockProductionMode)
	}
	onNode := func(layer string, do func(*devchain.Node) (*devchain.ClockView, error)) (*devchain.ClockView, error) {
		n, err := h.devNode(layer)
		if err != nil {
			return nil, err
		}
		return devResult(do(n))
	}
	return []*tool{
		typed(ToolDevTimeTravel, "Time Travel (cheatcode)",
			"Move a local chain node to a later slot, epoch or Unix time (milliseconds) now (surfnet_timeTravel): the working slot "+
				"ends, the next opens at the target and the Clock sysvar, epoch and block time move together. Give exactly one of "+
				"absoluteSlot, absoluteEpoch, absoluteTimestamp.",
			cheats, func(_ *DevTimeTravelRequest, v *devchain.ClockView) string { return clockText("Travelled", v) },
			func(ctx context.Context, req *DevTimeTravelRequest, _ auth.Bearer) (*devchain.ClockView, error) {
				return onNode(req.Layer, func(n *devchain.Node) (*devchain.ClockView, error) { return n.TimeTravel(ctx, req.TimeTravelRequest) })
			}),
		typed(ToolDevAdvanceClock, "Advance Clock (cheatcode)",
			"Move a local chain node's clock forward by seconds or slots (ferry_advanceClock). On the ephemeral layer this makes "+
				"delayed private payouts due: the local validator pays them as their delay runs out.",
			cheats, func(_ *DevAdvanceClockRequest, v *devchain.ClockView) string { return clockText("Advanced", v) },
			func(ctx context.Context, req *DevAdvanceClockRequest, _ auth.Bearer) (*devchain.ClockView, error) {
				return onNode(req.Layer, func(n *devchain.Node) (*devchain.ClockView, error) {
					return n.AdvanceClock(ctx, req.AdvanceClockRequest)
				})
			}),
		typed(ToolDevPauseClock, "Pause Clock (cheatcode)",
			"Stop a local chain node's clock (surfnet_pauseClock): no block is produced by the slot clock and its time stands still "+
				"until dev.resumeClock. Transactions still execute (processed) and land in the next block produced.",
			cheats, func(_ *DevClockRequest, v *devchain.ClockView) string { return clockText("Paused", v) },
			func(ctx context.Context, req *DevClockRequest, _ auth.Bearer) (*devchain.ClockView, error) {
				return onNode(req.Layer, func(n *devchain.Node) (*devchain.ClockView, error) { return n.PauseClock(ctx) })
			}),
		typed(ToolDevResumeClock, "Resume Clock (cheatcode)",
			"Restart a paused clock where it stopped (surfnet_resumeClock); the time spent paused does not count.",
			cheats, func(_ *DevClockRequest, v *devchain.ClockView) string { return clockText("Resumed", v) },
			func(ctx context.Context, req *DevClockRequest, _ auth.Bearer) (*devchain.ClockView, error) {
				return onNode(req.Layer, func(n *devchain.Node) (*devchain.ClockView, error) { return n.ResumeClock(ctx) })
			}),
		typed(ToolDevSetBlockMode, "Set Block Production Mode (cheatcode)",
			"Choose when a local chain node produces blocks (ferry_setBlockProductionMode): clock (a block per slot tick, the "+
				"default), transaction (a block per transaction) or manual (only dev.mineBlocks).",
			cheats, func(_ *DevBlockModeRequest, v *devchain.ClockView) string { return clockText("Set", v) },
			func(ctx context.Context, req *DevBlockModeRequest, _ auth.Bearer) (*devchain.ClockView, error) {
				return onNode(req.Layer, func(n *devchain.Node) (*devchain.ClockView, error) { return n.SetBlockMode(ctx, req.Mode) })
			}),
		typed(ToolDevMineBlocks, "Mine Blocks (cheatcode)",
			"Produce count blocks on a local chain node now, in any block production mode (ferry_mineBlocks); returns once they "+
				"are confirmed. A blockhash expires after 150 blocks.",
			cheats, func(_ *DevMineRequest, v *devchain.ClockView) string { return clockText("Mined", v) },
			func(ctx context.Context, req *DevMineRequest, _ auth.Bearer) (*devchain.ClockView, error) {
				count := req.Count
				if count == 0 {
					count = 1
				}
				return onNode(req.Layer, func(n *devchain.Node) (*devchain.ClockView, error) { return n.MineBlocks(ctx, count) })
			}),
		typed(ToolDevGetClock, "Show Clock",
			"Show a local chain node's clock: working slot, epoch, block height, Clock sysvar time, how far it is ahead of the "+
				"wall clock, whether it is paused and the block production mode (ferry_getClock).",
			readOnlyClosed, func(_ *DevClockRequest, v *devchain.ClockView) string { return clockText("Clock", v) },
			func(_ context.Context, req *DevClockRequest, _ auth.Bearer) (*devchain.ClockView, error) {
				return onNode(req.Layer, func(n *devchain.Node) (*devchain.ClockView, error) { return n.Clock(), nil })
			}),
	}
}

// devResult maps a cheatcode's error to the API's: a refusal is 400
// CHEATCODE_REFUSED with the JSON-RPC code (and data) in details.
func devResult[T any](out *T, err error) (*T, error) {
	if err == nil {
		return out, nil
	}
	var de *devchain.Error
	if errors.As(err, &de) && de.Code == devchain.CodeInvalidParams {
		details := map[string]any{"rpcCode": de.Code}
		if de.Data != nil {
			details["data"] = de.Data
		}
		return nil, apierr.New(http.StatusBadRequest, CodeCheatcodeRefused, de.Message).WithDetails(details)
	}
	return nil, apierr.Internal(err)
}
