package wire

import (
	"errors"
	"fmt"
)

// MinTokenLen is the shortest bearer token memdoctor accepts where it serves (the agent's
// handler, memdoctor serve): 16 characters of a random token cannot be guessed over HTTP.
const MinTokenLen = 16

// CheckToken is the one rule for the bearer tokens memdoctor serves behind: at least
// MinTokenLen characters, each printable ASCII other than the space, so that it travels
// unchanged in an Authorization header, a query or a cookie. "openssl rand -hex 16" makes
// one.
func CheckToken(token string) error {
	if len(token) < MinTokenLen {
		return fmt.Errorf("the token must be at least %d characters (openssl rand -hex 16 makes one)", MinTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if token[i] <= ' ' || token[i] >= 0x7f {
			return errors.New("the token has a space, control or non-ASCII character")
		}
	}
	return nil
}
