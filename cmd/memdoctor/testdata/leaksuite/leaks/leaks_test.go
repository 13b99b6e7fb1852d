package leaks

import "testing"

func TestSubscribe(t *testing.T) { Subscribe() }

func TestCompute(t *testing.T) { Compute() }

func TestFlush(t *testing.T) { Flush() }

func TestStartBatch(t *testing.T) { StartBatch() }

func TestWatch(t *testing.T) { Watch() }

func TestAwaitReady(t *testing.T) { AwaitReady() }

func TestPoll(t *testing.T) { Poll() }

func TestRecord(t *testing.T) {
	t.Run("small", func(t *testing.T) { Record(make([]byte, 200)) })
}

func TestConnect(t *testing.T) {
	if db := Connect(); db == nil {
		t.Fatal("no handle")
	}
}
