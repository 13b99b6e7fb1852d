//go:build !linux

package recorder

import "time"

// spendCPU stands for a read that costs the target d: elsewhere, its time.
func spendCPU(d time.Duration) { time.Sleep(d) }
