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
				{Accounts: 10, Transfers: 100, WritePerTx: 600, DeviceWritePerTx: 500},
				{Accounts: 10, Transfers: 300, WritePerTx: 1000, DeviceWritePerTx: 900},
			},
			want: "L=10 over 2 phases (400 transfers): 900 B written/transfer (device 800 B)",
		},
		{
			name: "a phase without the device figure",
			rows: []row{
				{Accounts: 7, Transfers: 100, WritePerTx: 600, DeviceWritePerTx: 500},
				{Accounts: 7, Transfers: 100, WritePerTx: 800, DeviceWritePerTx: -1},
				{Accounts: 7, Transfers: 100, WritePerTx: 700, DeviceWritePerTx: 500},
			},
			want: "L=7 over 3 phases (300 transfers): 700 B written/transfer (device n/a)",
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
