package cmdutil

import (
	"encoding/json"
	"testing"

	"github.com/ferry-sh/ferry/pkg/iostreams"
)

func TestJSONFilters(t *testing.T) {
	v := map[string]any{"signature": "abc", "sendTo": "base", "amount": json.Number("18446744073709551615"), "nested": map[string]any{"x": 1}}
	for _, c := range []struct {
		name   string
		fields []string
		jq     string
		want   string
		code   int
	}{
		{"fields", []string{"signature", "sendTo"}, "", "{\n  \"sendTo\": \"base\",\n  \"signature\": \"abc\"\n}\n", 0},
		{"jq string is raw", nil, ".signature", "abc\n", 0},
		{"jq keeps u64 exact", nil, ".amount", "18446744073709551615\n", 0},
		{"fields then jq", []string{"nested"}, ".nested.x", "1\n", 0},
		{"jq many", nil, ".signature, .sendTo", "abc\nbase\n", 0},
		{"unknown field", []string{"nope"}, "", "", ExitUsage},
	} {
		ios, _, out, _ := iostreams.Test()
		f := &Factory{IO: ios, Output: OutputJSON, JSONFields: c.fields, JQ: c.jq}
		err := f.PrintJSON(v)
		if Classify(err) != c.code || out.String() != c.want {
			t.Errorf("%s: %q, %v", c.name, out.String(), err)
		}
	}
	// A list: --json applies to each element.
	ios, _, out, _ := iostreams.Test()
	f := &Factory{IO: ios, Output: OutputJSON, JSONFields: []string{"a"}}
	if err := f.PrintJSON([]map[string]int{{"a": 1, "b": 2}, {"a": 3, "b": 4}}); err != nil || out.String() != "[\n  {\n    \"a\": 1\n  },\n  {\n    \"a\": 3\n  }\n]\n" {
		t.Errorf("list: %q %v", out.String(), err)
	}
}

func TestCheckJSONFlags(t *testing.T) {
	f := &Factory{Output: OutputText, JQ: ".x"}
	if err := f.CheckJSONFlags(false); err != nil || f.Output != OutputJSON {
		t.Fatalf("--jq implies json: %v %s", err, f.Output)
	}
	f = &Factory{Output: OutputBase64, JSONFields: []string{"a"}}
	if err := f.CheckJSONFlags(true); Classify(err) != ExitUsage {
		t.Fatalf("--json with --output base64: %v", err)
	}
	f = &Factory{Output: OutputText, JQ: ".["}
	if err := f.CheckJSONFlags(false); Classify(err) != ExitUsage {
		t.Fatalf("bad jq: %v", err)
	}
}
