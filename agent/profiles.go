package agent

import (
	"io"
	"slices"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
	"github.com/memdoctor/memdoctor/agent/wire"
)

// ProfileInfo describes one profile the agent holds: an entry of GET /debug/memdoctor/profiles.
type ProfileInfo = wire.ProfileInfo

// blob is the bytes of one captured profile, shared by every listing that names it (a
// periodic snapshot kept as the "before" of an event is listed twice, stored once). The bytes
// are never modified: a response still writing them when the blob is dropped keeps them.
type blob struct {
	data    []byte
	holders int // listings that name it
}

// profileRec is one listing.
type profileRec struct {
	ProfileInfo
	round uint64 // periodic round (0 for captures around events)
	b     *blob
}

// keptEvent is an event whose profiles are kept beyond the ring's rotation.
type keptEvent struct {
	Event
	recs []*profileRec
}

// profileStore holds the periodic profile ring, the last goroutineleak profiles and the
// events with their kept profiles, bounded in count and bytes. Safe for concurrent use.
type profileStore struct {
	mu        sync.Mutex
	pool      bufPool
	periodic  []*profileRec // time order
	leaks     []*profileRec // goroutineleak profiles, time order, at most maxLeakProfiles
	events    []*keptEvent  // time order
	bytes     int64
	maxBytes  int64
	maxRounds int
	maxEvents int
	counts    map[string]int // events by trigger since start
	seq       uint64         // periodic rounds
	eventSeq  uint64
}

func newProfileStore(rounds, events int, maxBytes int64) *profileStore {
	return &profileStore{maxRounds: rounds, maxEvents: events, maxBytes: maxBytes, counts: map[string]int{}}
}

func (s *profileStore) newBlobLocked(data []byte) *blob {
	s.bytes += int64(cap(data))
	return &blob{data: data}
}

func (s *profileStore) holdLocked(b *blob) { b.holders++ }

func (s *profileStore) releaseLocked(b *blob) {
	b.holders--
	if b.holders == 0 {
		s.bytes -= int64(cap(b.data))
		b.data = nil
	}
}

// addPeriodic stores one round of periodic profiles (kind -> bytes) taken at t.
func (s *profileStore) addPeriodic(t time.Time, profs map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	for _, kind := range []string{record.KindHeap, record.KindGoroutine} {
		data, ok := profs[kind]
		if !ok {
			continue
		}
		b := s.newBlobLocked(data)
		s.holdLocked(b)
		s.periodic = append(s.periodic, &profileRec{ProfileInfo: info(kind, t, "", len(data)), round: s.seq, b: b})
	}
	s.trimLocked()
}

// maxLeakProfiles is how many goroutineleak profiles the store keeps: they hold only the
// leaked goroutines (a few KiB), and two of them show whether a leak grows.
const maxLeakProfiles = 4

// addLeak stores a goroutineleak profile taken at t.
func (s *profileStore) addLeak(t time.Time, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.newBlobLocked(data)
	s.holdLocked(b)
	s.leaks = append(s.leaks, &profileRec{ProfileInfo: info(record.KindGoroutineLeak, t, "", len(data)), b: b})
	s.trimLocked()
}

func (s *profileStore) dropOldestLeakLocked() {
	s.releaseLocked(s.leaks[0].b)
	s.leaks[0] = nil
	s.leaks = slices.Delete(s.leaks, 0, 1)
}

func info(kind string, t time.Time, label string, size int) ProfileInfo {
	t = t.UTC()
	return ProfileInfo{Name: record.ProfileFileName(kind, t, label), Kind: kind, Time: t, Label: label, Size: size}
}

// trimLocked drops periodic rounds beyond the ring's size, then profiles beyond the byte cap:
// the oldest periodic ones first (the newest round stays), then the oldest goroutineleak
// profiles (the newest stays), then the oldest events.
func (s *profileStore) trimLocked() {
	for s.rounds() > s.maxRounds {
		s.dropOldestRoundLocked()
	}
	for len(s.leaks) > maxLeakProfiles {
		s.dropOldestLeakLocked()
	}
	for len(s.events) > s.maxEvents {
		s.dropOldestEventLocked()
	}
	for s.bytes > s.maxBytes {
		switch {
		case s.rounds() > 1:
			s.dropOldestRoundLocked()
		case len(s.leaks) > 1:
			s.dropOldestLeakLocked()
		case len(s.events) > 0:
			s.dropOldestEventLocked()
		default:
			return
		}
	}
}

func (s *profileStore) rounds() int {
	n := 0
	var last uint64
	for _, r := range s.periodic {
		if r.round != last {
			n++
			last = r.round
		}
	}
	return n
}

func (s *profileStore) dropOldestRoundLocked() {
	if len(s.periodic) == 0 {
		return
	}
	round := s.periodic[0].round
	i := 0
	for i < len(s.periodic) && s.periodic[i].round == round {
		s.releaseLocked(s.periodic[i].b)
		s.periodic[i] = nil
		i++
	}
	s.periodic = slices.Delete(s.periodic, 0, i)
}

func (s *profileStore) dropOldestEventLocked() {
	ev := s.events[0]
	for _, r := range ev.recs {
		s.releaseLocked(r.b)
	}
	s.events[0] = nil
	s.events = slices.Delete(s.events, 0, 1)
}

// before finds the periodic round to keep as the "before" of an event whose spike began
// after start: the newest round taken at or before start, else the oldest round held (the
// spike began before any profile the agent still has). It returns the round's listings.
func (s *profileStore) beforeLocked(start time.Time) []*profileRec {
	var round uint64
	for _, r := range s.periodic {
		if !r.Time.After(start) {
			round = r.round
		}
	}
	if round == 0 && len(s.periodic) > 0 {
		round = s.periodic[0].round
	}
	var out []*profileRec
	for _, r := range s.periodic {
		if r.round == round {
			out = append(out, r)
		}
	}
	return out
}

// addEvent keeps ev with the periodic round from before spikeStart, labelled
// "before-<trigger>". It fills ev's ID and "before" names. The "after" profiles come later
// (addAfter), once the rise has stopped.
func (s *profileStore) addEvent(ev Event, spikeStart time.Time) Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eventSeq++
	ev.ID = s.eventSeq
	ke := &keptEvent{}
	for _, r := range s.beforeLocked(spikeStart) {
		s.holdLocked(r.b)
		rec := &profileRec{ProfileInfo: info(r.Kind, r.Time, record.RoleBefore.Label(ev.Trigger), r.Size), b: r.b}
		ke.recs = append(ke.recs, rec)
		setEventName(&ev, r.Kind, true, rec.Name)
	}
	ke.Event = ev
	s.events = append(s.events, ke)
	s.counts[ev.Trigger]++
	s.trimLocked()
	return ev
}

// addAfter keeps the profiles taken at t (kind -> bytes) as the "after" of the events with
// the given IDs that are still kept, labelled "after-<trigger>"; events share the bytes.
func (s *profileStore) addAfter(ids []uint64, t time.Time, profs map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	blobs := make(map[string]*blob, len(profs))
	for kind, data := range profs {
		blobs[kind] = s.newBlobLocked(data)
	}
	for _, ke := range s.events {
		if !slices.Contains(ids, ke.ID) {
			continue
		}
		for _, kind := range []string{record.KindHeap, record.KindGoroutine} {
			b, ok := blobs[kind]
			if !ok {
				continue
			}
			s.holdLocked(b)
			rec := &profileRec{ProfileInfo: info(kind, t, record.RoleAfter.Label(ke.Trigger), len(b.data)), b: b}
			ke.recs = append(ke.recs, rec)
			setEventName(&ke.Event, kind, false, rec.Name)
		}
	}
	for _, b := range blobs {
		if b.holders == 0 { // every event was trimmed meanwhile
			b.holders = 1
			s.releaseLocked(b)
		}
	}
	s.trimLocked()
}

// setTrace records the trace of the events with the given IDs (still kept).
func (s *profileStore) setTrace(ids []uint64, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ke := range s.events {
		if slices.Contains(ids, ke.ID) {
			ke.Trace = name
		}
	}
}

// list returns the listings: periodic ones, then the events' in event order. A name listed
// by two events (two triggers kept the same snapshot) is listed once.
func (s *profileStore) list() []ProfileInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ProfileInfo, 0, len(s.periodic)+len(s.leaks)+4*len(s.events))
	seen := make(map[string]bool)
	add := func(r *profileRec) {
		if !seen[r.Name] {
			seen[r.Name] = true
			out = append(out, r.ProfileInfo)
		}
	}
	for _, r := range s.periodic {
		add(r)
	}
	for _, r := range s.leaks {
		add(r)
	}
	for _, ke := range s.events {
		for _, r := range ke.recs {
			add(r)
		}
	}
	return out
}

// eventList returns the kept events, oldest first.
func (s *profileStore) eventList() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Event, 0, len(s.events))
	for _, ke := range s.events {
		out = append(out, cloneEvent(ke.Event))
	}
	return out
}

// eventCounts returns how many events each trigger fired since start.
func (s *profileStore) eventCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// writeTo writes the named profile's bytes to w without holding the store's lock while
// writing. found is false when no profile has that name.
func (s *profileStore) writeTo(name string, w io.Writer) (found bool, err error) {
	s.mu.Lock()
	b := s.findLocked(name)
	var data []byte
	if b != nil {
		data = b.data
	}
	s.mu.Unlock()
	if b == nil {
		return false, nil
	}
	_, err = w.Write(data)
	return true, err
}

// bytesOf returns a copy of the named profile's bytes.
func (s *profileStore) bytesOf(name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.findLocked(name)
	if b == nil {
		return nil, false
	}
	return append([]byte(nil), b.data...), true
}

func (s *profileStore) findLocked(name string) *blob {
	for _, recs := range [][]*profileRec{s.periodic, s.leaks} {
		for _, r := range recs {
			if r.Name == name {
				return r.b
			}
		}
	}
	for _, ke := range s.events {
		for _, r := range ke.recs {
			if r.Name == name {
				return r.b
			}
		}
	}
	return nil
}

// heldBytes returns the bytes the store holds.
func (s *profileStore) heldBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}
