package process

import (
	"fmt"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/pkg/proc/core"
)

func openDelveCore(corePath, exePath string) (grp *proc.TargetGroup, err error) {
	err = Safely(func() error {
		grp, err = core.OpenCore(corePath, exePath, nil)
		return err
	})
	return grp, err
}

// Safely runs fn, turning a panic in it (Delve reading a corrupt core or a hostile process)
// into an error.
func Safely(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the reader failed on what it read (%v): the core or the process is corrupt", p)
		}
	}()
	return fn()
}
