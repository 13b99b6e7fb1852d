package process

import (
	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/pkg/proc/core"
)

func openDelveCore(corePath, exePath string) (*proc.TargetGroup, error) {
	return core.OpenCore(corePath, exePath, nil)
}
