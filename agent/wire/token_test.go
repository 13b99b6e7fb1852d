package wire

import "testing"

func TestCheckToken(t *testing.T) {
	for tok, ok := range map[string]bool{
		"0123456789abcdef": true, "token-0123456789abcdef": true, "!~#%&*+-./:;<=>?@[]^_`{|}": true,
		"": false, "x": false, "0123456789abcde": false, "has a space in it ok": false,
		"tab\tinside-0123456789": false, "ümlaut-0123456789abc": false, "nul\x00-0123456789abcd": false, "del\x7f-0123456789abcd": false,
	} {
		if err := CheckToken(tok); (err == nil) != ok {
			t.Errorf("CheckToken(%q) = %v, want ok %v", tok, err, ok)
		}
	}
}
