package ledger

// FailCommits is a failpoint for tests of what happens when the disk
// fills: from now on every slot commit fails with err, as a write to a
// full disk does. The ledger halts on the next commit exactly as it would
// then (Health reports the failure, nothing more becomes confirmed,
// transactions are refused), and a restart of the process resumes from
// the last durable slot. Tests and the ferry_haltLedger cheat method call
// it (an application tests its handling of a halted node with it); a nil
// err clears the failpoint (an already halted ledger stays halted).
func (l *Ledger) FailCommits(err error) {
	if err == nil {
		l.commitFault.Store(nil)
		return
	}
	l.commitFault.Store(&err)
}

// commit persists one frozen slot, unless the failpoint says otherwise.
func (l *Ledger) commit(f *frozenSlot) error {
	if p := l.commitFault.Load(); p != nil {
		return *p
	}
	return l.store.commit(f)
}
