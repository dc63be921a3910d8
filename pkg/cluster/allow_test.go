package cluster

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAllowPatterns(t *testing.T) {
	a, err := NewAllowList([]string{
		"rpc.example.com",
		"http://127.0.0.1:8899",
		"*://*.helius.test:*",
		"https://[::1]:9000",
		"HTTPS://Mixed.Case.Test",
	}, "http://10.0.0.5:7799/some/path?token=x")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"https://rpc.example.com", true},
		{"https://rpc.example.com:443/v1?api-key=k", true},
		{"https://RPC.EXAMPLE.COM/", true},
		{"http://rpc.example.com", false},            // no scheme in the pattern: https only
		{"https://rpc.example.com:8443", false},      // no port: the default port only
		{"https://evil.rpc.example.com", false},      // no glob: exact host
		{"https://rpc.example.com.evil.test", false}, // suffix tricks
		{"http://127.0.0.1:8899", true},
		{"http://127.0.0.1:8900", false},
		{"https://127.0.0.1:8899", false},
		{"http://localhost:8899", false},
		{"http://a.helius.test:1234", true},
		{"https://a.b.helius.test", true},
		{"http://helius.test", false},
		{"https://[::1]:9000", true},
		{"https://[::1]:9001", false},
		{"https://mixed.case.test", true},
		{"http://10.0.0.5:7799", true}, // trusted origin, any path
		{"http://10.0.0.5:7799/other", true},
		{"https://10.0.0.5:7799", false},
		{"ftp://rpc.example.com", false},
		{"rpc.example.com", false},
		{"", false},
		{"https://user:pw@rpc.example.com", true}, // user info is not part of the origin
		{"https://rpc.example.com@evil.test", false},
	} {
		if got := a.Allows(c.url); got != c.want {
			t.Errorf("Allows(%q) = %v, want %v", c.url, got, c.want)
		}
	}
	var zero *AllowList
	if zero.Allows("https://rpc.example.com") || (&AllowList{}).Allows("https://rpc.example.com") {
		t.Fatal("an empty allow-list allows something")
	}
}

func TestParseAllowPatternErrors(t *testing.T) {
	for _, s := range []string{"", "   ", "ftp://x", "https://x/path", "x?q=1", "user@x", "::1", "[::1", "[::1]x",
		"x:port", "x:123456", "https://", "a b", "[]"} {
		if _, err := ParseAllowPattern(s); !errors.Is(err, ErrAllowPattern) {
			t.Errorf("ParseAllowPattern(%q) = %v, want ErrAllowPattern", s, err)
		}
	}
	if _, err := NewAllowList([]string{"ok.test", "bad/pattern"}); !errors.Is(err, ErrAllowPattern) || !strings.Contains(err.Error(), "bad/pattern") {
		t.Fatal(err)
	}
}

func TestSplitAllowPatterns(t *testing.T) {
	got := SplitAllowPatterns(" a.test, http://b.test:1 \n*.c.test,,")
	if !slices.Equal(got, []string{"a.test", "http://b.test:1", "*.c.test"}) {
		t.Fatal(got)
	}
	if Host("https://u:p@rpc.test:8443/x?api-key=s") != "rpc.test:8443" {
		t.Fatal(Host("https://u:p@rpc.test:8443/x?api-key=s"))
	}
}

// FuzzAllowList checks that parsing never panics and that a parsed
// pattern's own host (with a matching scheme and port) is allowed.
func FuzzAllowList(f *testing.F) {
	for _, s := range []string{"rpc.example.com", "http://127.0.0.1:8899", "*://*.x.test:*", "https://[::1]:9000", "a[", "*:*", "http://x:0"} {
		f.Add(s, "https://rpc.example.com")
	}
	f.Fuzz(func(t *testing.T, pattern, u string) {
		a, err := NewAllowList([]string{pattern}, u)
		if err != nil {
			return
		}
		_ = a.Allows(u)
		p := a.Patterns()[0]
		if strings.ContainsAny(p.Host, "*?[]\\") {
			return
		}
		port := p.Port
		if port == "*" {
			port = "1234"
		}
		host := p.Host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		for _, scheme := range p.Schemes {
			target := scheme + "://" + host
			if port != "" {
				target += ":" + port
			}
			if _, ok := origin(target); ok && !a.Allows(target) {
				t.Fatalf("pattern %q does not allow its own host %q", pattern, target)
			}
		}
	})
}
