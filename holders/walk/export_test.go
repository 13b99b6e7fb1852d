package walk

// CopyCore makes Read copy a core as it copies a live process, and walk the copy.
func CopyCore(o Options) Options {
	o.copyCore = true
	return o
}

// Held makes Read take the live process as held stopped by the caller; direct walks it there
// (as before copies), else its copy.
func Held(o Options, direct bool) Options {
	o.held, o.direct = true, direct
	return o
}
