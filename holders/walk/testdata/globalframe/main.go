// Command globalframe keeps records that a package variable reaches and, at every reading, a
// goroutine's frame too by a shorter way: a metrics registry (the package variable defaultRegistry)
// keeps a vector, whose series keep the records; a goroutine is caught inside the vector's
// with, which waits there for ever holding the vector. memdoctor holders must name the records
// from the package variable, defaultRegistry.vecs[value].series[value].buckets, which holds them
// whatever the goroutines do, never from with's frame, which holds them only while that call
// lasts (the lab's holder-interface-registry was named from with's frame when the process was
// read inside it).
//
// With -send, a goroutine also waits for ever to send to a full buffered channel that only its
// frame holds: the events in the buffer must be named from that frame (send.ch.buf[i]), not
// through the runtime's own package variables, which reach the channel from the waiting
// goroutine (runtime.allgs[i].waiting.c) only while it waits.
//
// It prints its pid and "ready" once every goroutine waits.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

type registry struct {
	vecs map[string]*vec
}

type vec struct {
	name   string
	series map[string]*series
}

type series struct {
	label   string
	buckets []byte
}

var defaultRegistry = newRegistry()

//go:noinline
func newRegistry() *registry { return &registry{vecs: map[string]*vec{}} }

var never chan struct{} // nil: a receive waits for ever

func main() {
	send := flag.Bool("send", false, "a goroutine also waits to send to a full channel its frame holds")
	flag.Parse()
	runtime.MemProfileRate = 4096
	v := &vec{name: "requests", series: map[string]*series{}}
	defaultRegistry.vecs[v.name] = v
	for i := range 1000 {
		v.series[fmt.Sprint("/users/", i)] = &series{label: fmt.Sprint(i), buckets: newBuckets()}
	}
	ready := make(chan struct{})
	go v.with(ready)
	<-ready
	if *send {
		full := make(chan struct{})
		go sendEvents(full)
		<-full
	}
	fmt.Println(os.Getpid(), "ready")
	for {
		time.Sleep(time.Hour)
	}
}

// newBuckets is the site whose records are held.
//
//go:noinline
func newBuckets() []byte { return make([]byte, 4096) }

// with holds the vector in its frame while it waits, as a call into the vector does.
//
//go:noinline
func (v *vec) with(ready chan struct{}) {
	close(ready)
	<-never
	v.name += "" // v is live in with's frame across the wait
}

// sendEvents fills a channel no one reads and waits to send one more.
//
//go:noinline
func sendEvents(full chan struct{}) {
	ch := make(chan []byte, 1000)
	for range cap(ch) {
		ch <- newEvent()
	}
	close(full)
	ch <- newEvent()
	fmt.Println(len(ch)) // ch is live in the frame across the send
}

// newEvent is the site of the events in the channel's buffer.
//
//go:noinline
func newEvent() []byte { return make([]byte, 4096) }
