// Package leaks holds a leak of each shape memdoctor test finds in a suite: goroutines left
// blocked on a channel, a mutex, a WaitGroup, a select, a sync.Cond, a goroutine that spins
// for ever, a global that grows, and a library's goroutines never closed.
package leaks

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// Subscribe starts a subscriber that waits for a message nobody sends.
func Subscribe() { go receive(make(chan string)) }

func receive(ch chan string) { <-ch }

// Compute hands its result to a channel nobody reads.
func Compute() { go send(make(chan int)) }

func send(ch chan int) { ch <- 42 }

// held is a lock a background job took and never gave back.
var held sync.Mutex

func init() { held.Lock() }

// Flush waits for the lock the background job holds.
func Flush() { go flush() }

func flush() {
	held.Lock()
	held.Unlock()
}

// StartBatch waits for a batch whose workers never say they are done.
func StartBatch() {
	var wg sync.WaitGroup
	wg.Add(1)
	go awaitBatch(&wg)
}

func awaitBatch(wg *sync.WaitGroup) { wg.Wait() }

// Watch waits for either of two events, neither of which comes.
func Watch() { go watch(make(chan int), make(chan struct{})) }

func watch(updates chan int, quit chan struct{}) {
	select {
	case <-updates:
	case <-quit:
	}
}

// ready is a condition nobody signals.
var ready = sync.NewCond(&sync.Mutex{})

// AwaitReady waits for a signal that never comes.
func AwaitReady() { go awaitReady() }

func awaitReady() {
	ready.L.Lock()
	ready.Wait()
	ready.L.Unlock()
}

// Poll starts a poller that spins until it is stopped, and nothing stops it.
func Poll() { go spin(new(atomic.Bool)) }

func spin(stop *atomic.Bool) {
	for !stop.Load() {
		runtime.Gosched()
	}
}

// history keeps every request for ever.
var history [][]byte

// Record remembers a request.
func Record(req []byte) { history = append(history, bytes.Clone(req)) }

// Connect opens a database handle and never closes it: database/sql starts a goroutine for
// each handle, which only Close ends.
func Connect() *sql.DB {
	db, err := sql.Open("nop", "")
	if err != nil {
		panic(err)
	}
	return db
}

func init() { sql.Register("nop", nopDriver{}) }

type nopDriver struct{}

func (nopDriver) Open(string) (driver.Conn, error) { return nil, errors.New("no database") }
