// Package notjudged holds tests memdoctor test cannot judge, and says why.
package notjudged

import (
	"os"
	"testing"
)

func TestSkips(t *testing.T) { t.Skip("needs a database") }

func TestFails(t *testing.T) { t.Error("wrong answer") }

var registered = map[string]bool{}

func TestFailsWhenRunAgain(t *testing.T) {
	if registered["metrics"] {
		t.Fatal(`"metrics" is already registered`)
	}
	registered["metrics"] = true
}

var panics int

func TestPanicsOnItsSecondRun(t *testing.T) {
	if panics++; panics == 2 {
		panic("duplicate collector")
	}
}

var exits int

func TestExitsOnItsSecondRun(t *testing.T) {
	if exits++; exits == 2 {
		os.Exit(3)
	}
}

var hangs int

func TestHangsOnItsSecondRun(t *testing.T) {
	if hangs++; hangs == 2 {
		<-make(chan struct{})
	}
}

func TestAfterTheOthers(t *testing.T) {}
