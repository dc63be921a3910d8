package iostreams

import (
	"bytes"
	"regexp"
	"testing"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestWriteJSONPlain(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []byte(`{"a":[1,18446744073709551615,-2.5e3],"b":{"c":null,"d":true,"e":"x\"y: z"}}`), false); err != nil {
		t.Fatal(err)
	}
	want := `{
  "a": [
    1,
    18446744073709551615,
    -2.5e3
  ],
  "b": {
    "c": null,
    "d": true,
    "e": "x\"y: z"
  }
}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if err := WriteJSON(&buf, []byte(`{"a":`), false); err == nil {
		t.Error("invalid JSON accepted")
	}
}

func TestColorizeJSON(t *testing.T) {
	in := []byte(`{"key": "value: \"q\"", "n": -12.5, "t": true, "f": false, "z": null, "arr": ["s", 3]}`)
	got := ColorizeJSON(in)
	if stripped := ansi.ReplaceAll(got, nil); !bytes.Equal(stripped, in) {
		t.Errorf("colouring changed the text:\n%s", stripped)
	}
	for _, want := range []string{
		jsonKeyStyle + `"key"` + jsonReset,
		jsonStringStyle + `"value: \"q\""` + jsonReset,
		jsonNumberStyle + `-12.5` + jsonReset,
		jsonLiteralStyle + `true` + jsonReset,
		jsonLiteralStyle + `false` + jsonReset,
		jsonNullStyle + `null` + jsonReset,
		jsonStringStyle + `"s"` + jsonReset,
		jsonNumberStyle + `3` + jsonReset,
	} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
}

func TestWriteJSONColorThroughStyledPipe(t *testing.T) {
	s, _, out, _ := Test()
	if err := WriteJSON(s.StyledOut(), []byte(`{"a":1}`), true); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("a pipe got %q; want the codes stripped", out.String())
	}
}
