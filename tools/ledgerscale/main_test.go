package main

import "testing"

func TestPhaseMeans(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []row
		want string
	}{
		{
			name: "weighted by transfers",
			rows: []row{
				{Accounts: 10, Transfers: 100, TPS: 50, P99ms: 700, WritePerTx: 600, DeviceWritePerTx: 500},
				{Accounts: 10, Transfers: 300, TPS: 300, P99ms: 400, WritePerTx: 1000, DeviceWritePerTx: 900},
			},
			// 400 transfers in 2 s + 1 s: the phases' rate over their time, not the mean of the rates (175).
			want: "L=10 over 2 phases (400 transfers): 133 transfers/s, p99 at most 700 ms, 900 B written/transfer (device 800 B)",
		},
		{
			name: "a phase without the device figure",
			rows: []row{
				{Accounts: 7, Transfers: 100, TPS: 100, P99ms: 300, WritePerTx: 600, DeviceWritePerTx: 500},
				{Accounts: 7, Transfers: 100, TPS: 25, P99ms: 900, WritePerTx: 800, DeviceWritePerTx: -1},
				{Accounts: 7, Transfers: 100, TPS: 100, P99ms: 300, WritePerTx: 700, DeviceWritePerTx: 500},
			},
			want: "L=7 over 3 phases (300 transfers): 50 transfers/s, p99 at most 900 ms, 700 B written/transfer (device n/a)",
		},
		{
			name: "nothing confirmed",
			rows: []row{{Accounts: 3}},
			want: "L=3 over 1 phases: no transfers",
		},
	} {
		if got := phaseMeans(tc.rows); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestClosingWrites(t *testing.T) {
	log := `time=2026-11-29T10:14:40Z level=INFO msg="ledger resumed" ledger=base slot=1180
time=2026-11-29T10:14:43Z level=INFO msg="ledger closing" ledger=ephemeral slot=14448 account_records_bytes=32220 database_bytes=11816960
time=2026-11-29T10:14:43Z level=INFO msg="ledger closing" ledger=base slot=1784 account_records_bytes=215846078 account_cleaning_bytes=35624626 key_directory_bytes=106767105 signatures_bytes=82693579 heads_bytes=52881916 database_bytes=469536768
time=2026-11-29T10:15:43Z level=INFO msg="ledger closing" ledger=base slot=1790 account_records_bytes=1 database_bytes=2
`
	got := closingWrites(log, "base")
	want := map[string]int64{
		"account_records_bytes": 215846078, "account_cleaning_bytes": 35624626, "key_directory_bytes": 106767105,
		"signatures_bytes": 82693579, "heads_bytes": 52881916, "database_bytes": 469536768,
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	if w := closingWrites(log, "ephemeral"); w["account_records_bytes"] != 32220 || w["database_bytes"] != 11816960 {
		t.Errorf("ephemeral: %v", w)
	}
	if w := closingWrites(`msg="ledger resumed" ledger=base`, "base"); w != nil {
		t.Errorf("no closing line: got %v", w)
	}
	line := storageLine(1000000, map[string]float64{"account_records_bytes": 180, "database_bytes": 391.4})
	if want := "L=1000000 the base ledger wrote per transfer: account records 180 B, cleaning 0 B, key directory 0 B, signatures 0 B, heads 0 B, bbolt 391 B (sum 571 B)"; line != want {
		t.Errorf("storageLine:\n got %q\nwant %q", line, want)
	}
}
