package leaktest

import (
	"fmt"
	"time"
)

// An Option changes how Loop tests: pass any number of them after the function.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// The defaults of the options.
const (
	// DefaultTimeLimit is how long Loop may run fn, warm-up included, before it gives its
	// verdict with what it has: a growth it suspects but could not confirm by then is logged
	// (t.Log), not failed. Loop returns within a few seconds of it whatever fn does.
	DefaultTimeLimit = 10 * time.Second
	// DefaultMinBytesPerCall is the smallest growth of the live heap per call that counts as a
	// leak: one byte, so that any memory kept for good by every call (a map entry, a slice
	// element) counts; the statistics, not this floor, keep noise out.
	DefaultMinBytesPerCall = 1.0
	// DefaultMinGoroutinesPerCall is the smallest growth of the goroutines per call that
	// counts: one goroutine left behind every thousand calls.
	DefaultMinGoroutinesPerCall = 0.001
)

// The least growth over a whole test that counts, whatever the calls: below it, a growth is too
// small to matter or to tell from the test's own noise.
const (
	minHeapGrowth      = 64 << 10
	minGoroutineGrowth = 4
)

type config struct {
	timeLimit            time.Duration
	minBytesPerCall      float64
	minGoroutinesPerCall float64
	heap, goroutines     bool
	warmup               int
	ignoreSites          []string
	ignoreTop            []string
	// roundTime is the least time a round takes (tests of leaktest itself lower it).
	roundTime time.Duration
	// holders says whether a heap leak's failure runs memdoctor holders (tests turn it off).
	holders bool
	// run and skip are CheckTest's -run and -skip patterns, when selected (Select).
	run, skip string
	selected  bool
}

func defaults() config {
	return config{
		timeLimit:            DefaultTimeLimit,
		minBytesPerCall:      DefaultMinBytesPerCall,
		minGoroutinesPerCall: DefaultMinGoroutinesPerCall,
		heap:                 true,
		goroutines:           true,
		roundTime:            defaultRoundTime,
		holders:              true,
	}
}

// defaultRoundTime is the least time a round of calls takes: long enough for the garbage
// collection and the readings that end it to cost a few percent of the test.
const defaultRoundTime = 20 * time.Millisecond

// TimeLimit bounds Loop's wall time (default DefaultTimeLimit, 10 s), its warm-up included,
// whatever fn does or leaves behind. A clear leak or a clearly stable heap is judged well
// before it (a second or two for most functions); the limit matters when a growth is
// suspected but not yet confirmed: Loop then runs more rounds until it is sure, or until the
// limit. At the limit Loop stops calling fn after the call under way, gives that call a grace
// (20 times the calls' mean time, 1 to 3 s) and judges what it has; a call that outlasts the
// grace while it took 20 times the others (or the first call, after the whole limit) hangs,
// and fails the test. A run with fewer than eight readings at the limit (a loaded machine
// slows the rounds) goes on for them up to three times the limit, unless its calls left
// goroutines that never block.
func TimeLimit(d time.Duration) Option {
	return optionFunc(func(c *config) { c.timeLimit = d })
}

// MinBytesPerCall is the smallest growth of the live heap, in bytes per call of fn, that
// counts as a leak (default DefaultMinBytesPerCall, 1 byte). Raise it to accept a slow,
// known growth.
func MinBytesPerCall(n float64) Option {
	return optionFunc(func(c *config) { c.minBytesPerCall = n })
}

// MinGoroutinesPerCall is the smallest growth of the goroutines, per call of fn, that counts as
// a leak (default DefaultMinGoroutinesPerCall, one in a thousand calls).
func MinGoroutinesPerCall(n float64) Option {
	return optionFunc(func(c *config) { c.minGoroutinesPerCall = n })
}

// HeapOnly checks the live heap and not the goroutines.
func HeapOnly() Option {
	return optionFunc(func(c *config) { c.heap, c.goroutines = true, false })
}

// GoroutinesOnly checks the goroutines and not the live heap. It also leaves the heap profile's
// sampling rate alone, so fn runs at its usual speed.
func GoroutinesOnly() Option {
	return optionFunc(func(c *config) { c.heap, c.goroutines = false, true })
}

// Warmup calls fn n times before the first measured round, on top of the round Loop always
// runs first: for a cache or a pool larger than one round fills, which must be full before
// its memory stops growing (a cache of a million entries needs Warmup(1_000_000)).
func Warmup(n int) Option {
	return optionFunc(func(c *config) { c.warmup = n })
}

// IgnoreSites leaves out of the heap's growth the memory allocated under any of the
// functions (full names as a stack trace prints them: "github.com/acme/cache.(*LRU).Add"):
// a growth you know and accept. Every allocation whose stack holds one of them is left out.
func IgnoreSites(functions ...string) Option {
	return optionFunc(func(c *config) { c.ignoreSites = append(c.ignoreSites, functions...) })
}

// IgnoreTopFunction leaves out of the goroutines' count those whose top function (the first
// in their stack trace, as goleak.IgnoreTopFunction reads it) is one of these, for background
// goroutines whose number grows by design.
func IgnoreTopFunction(functions ...string) Option {
	return optionFunc(func(c *config) { c.ignoreTop = append(c.ignoreTop, functions...) })
}

// check returns the first option that makes no sense, in words.
func (c *config) check() error {
	switch {
	case c.timeLimit <= 0:
		return fmt.Errorf("TimeLimit(%v): want a positive duration", c.timeLimit)
	case c.minBytesPerCall < 0:
		return fmt.Errorf("MinBytesPerCall(%g): want 0 or more", c.minBytesPerCall)
	case c.minGoroutinesPerCall < 0:
		return fmt.Errorf("MinGoroutinesPerCall(%g): want 0 or more", c.minGoroutinesPerCall)
	case c.warmup < 0:
		return fmt.Errorf("Warmup(%d): want 0 or more calls", c.warmup)
	}
	return nil
}
