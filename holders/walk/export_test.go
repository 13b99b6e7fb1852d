package walk

// CopyCore makes Read copy a core as it copies a live process, and walk the copy.
func CopyCore(o Options) Options {
	o.copyCore = true
	return o
}
