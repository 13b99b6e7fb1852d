//go:build !unix

package walk

// words is an array of n uint32 (in the Go heap where pages cannot be mapped apart).
func words(n int) ([]uint32, func(), error) { return make([]uint32, n), func() {}, nil }
