package kernels

import (
	"context"
	"hash/crc32"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// watchHub answers a watch with the next event on its key; a poller fetches it.
type watchHub struct{ revision int64 }

// watch waits for the key's next event until the context ends. The poller's channel is
// unbuffered: once the watcher has given up, the poller's send blocks for good.
func (h *watchHub) watch(ctx context.Context, key string) (string, error) {
	events := make(chan string)
	go h.poll(key, events)
	select {
	case ev := <-events:
		return ev, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (h *watchHub) poll(key string, events chan<- string) {
	ev := "PUT " + key + "@" + strconv.FormatInt(h.revision, 10)
	events <- ev
}

// A watcher whose deadline passed before the event came.
func TestEtcdWatchTimeout(t *testing.T) {
	h := &watchHub{revision: 7}
	run(t, kernel{
		fn: func() {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			h.watch(ctx, "/registry/pods")
		},
		own: "example.com/kernels.(*watchHub).poll", file: "etcd_test.go",
		def: "func (h *watchHub) poll(", goStmt: "go h.poll(key, events)",
	})
}

// lessor keeps a lease alive until it is revoked: each lease's renewer wakes on its ticker,
// and stops when its channel is closed. revoke forgets the lease but not its renewer.
type lessor struct {
	mu     sync.Mutex
	leases map[int64]chan struct{}
	next   int64
}

func (l *lessor) grant() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	stop := make(chan struct{})
	l.leases[l.next] = stop
	go l.renew(l.next, stop)
	return l.next
}

func (l *lessor) renew(id int64, stop chan struct{}) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = id
		}
	}
}

func (l *lessor) revoke(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.leases, id) // the bug: close(stop) is missing
}

// A lease granted then revoked: its renewer waits on its ticker for good.
func TestEtcdRevokedLease(t *testing.T) {
	l := &lessor{leases: map[int64]chan struct{}{}}
	run(t, kernel{
		fn:  func() { l.revoke(l.grant()) },
		own: "example.com/kernels.(*lessor).renew", file: "etcd_test.go",
		def: "func (l *lessor) renew(", goStmt: "go l.renew(l.next, stop)",
	})
}

// member is one of a cluster's members, which hashes its store when asked.
type member struct {
	id    int
	store []byte
}

func (m *member) hashKV(rev int64) uint32 {
	h := crc32.NewIEEE()
	for i := range 64 {
		h.Write(m.store)
		h.Write([]byte{byte(rev), byte(i)})
	}
	return h.Sum32()
}

// cluster checks its members' stores agree: every member hashes its store on a goroutine of
// its own, and a checker compares the hashes with the leader's in the background. The leader
// is a member too, but the checker reads one hash fewer: one member stays blocked on its send.
type cluster struct {
	members    []*member
	mismatches atomic.Int64
}

func (c *cluster) checkHashes(rev int64) {
	hashes := make(chan uint32)
	for _, m := range c.members {
		go func() { hashes <- m.hashKV(rev) }()
	}
	go func() {
		leader := c.members[0].hashKV(rev)
		for range len(c.members) - 1 { // the bug: the leader's own goroutine is among the members
			if <-hashes != leader {
				c.mismatches.Add(1)
			}
		}
	}()
}

// Family 2: a call that returns at once, leaving hundreds of goroutines of work behind, one
// of which never ends.
func TestEtcdHashCheck(t *testing.T) {
	c := &cluster{}
	for i := range 200 {
		c.members = append(c.members, &member{id: i, store: make([]byte, 512)})
	}
	run(t, kernel{
		family: "2", fn: func() { c.checkHashes(42) },
		own: "example.com/kernels.(*cluster).checkHashes.func1", file: "etcd_test.go",
		def: "go func() { hashes <- m.hashKV(rev) }()", goStmt: "go func() { hashes <- m.hashKV(rev) }()",
	})
}
