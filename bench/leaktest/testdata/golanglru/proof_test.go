package proof

import (
	"strconv"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/memdoctor/memdoctor/leaktest"
)

// hashicorp/golang-lru's bounded cache, filled far past its size with keys never seen before:
// it evicts as much as it adds, so its memory stops growing once it is full.
func TestBoundedLRU(t *testing.T) {
	cache, err := lru.New[string, []byte](1000)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	leaktest.Loop(t, func() {
		cache.Add("session-"+strconv.Itoa(i), make([]byte, 128))
		i++
	})
	if cache.Len() != 1000 {
		t.Errorf("the cache holds %d entries, want 1000", cache.Len())
	}
}
