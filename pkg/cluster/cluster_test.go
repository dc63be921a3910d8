package cluster

import "testing"

func TestCrankEndpoint(t *testing.T) {
	ep, err := Resolve("devnet", Overrides{})
	if err != nil || ep.Crank != "" || ep.CrankRPC() != ep.Ephemeral {
		t.Fatalf("%+v %v", ep, err)
	}
	o := Overrides{PerCluster: map[string]Overrides{"devnet": {Crank: "https://crank.example"}}}
	for _, name := range []string{"devnet", "devnet-private"} {
		ep, err = Resolve(name, o)
		if err != nil || ep.CrankRPC() != "https://crank.example" {
			t.Fatalf("%s: %+v %v", name, ep, err)
		}
	}
	if ep, _ = Resolve("mainnet", o); ep.CrankRPC() != ep.Ephemeral {
		t.Fatalf("%+v", ep)
	}
	if ep, _ = Resolve("local", Overrides{Crank: "http://127.0.0.1:9"}); ep.CrankRPC() != "http://127.0.0.1:9" {
		t.Fatalf("%+v", ep)
	}
	if _, err := Resolve("moon", o); err != ErrInvalid {
		t.Fatal(err)
	}
}
