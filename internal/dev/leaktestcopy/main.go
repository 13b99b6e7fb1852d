// Command leaktestcopy writes internal/suite/leaktest.txtar again from the working tree's
// leaktest module: the copy of leaktest memdoctor test builds the tests with. Run it with go
// generate ./internal/suite after a change to leaktest (TestLeaktestCopyInSync fails until
// then).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/memdoctor/memdoctor/internal/suite"
)

func main() {
	// go generate runs it in internal/suite.
	archive, err := suite.Pack(filepath.Join("..", "..", "leaktest"))
	if err == nil {
		err = os.WriteFile("leaktest.txtar", archive, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "leaktestcopy:", err)
		os.Exit(1)
	}
}
