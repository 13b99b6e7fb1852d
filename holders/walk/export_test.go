package walk

// Held makes Read take the live process as held stopped by the caller; direct walks it there
// (as before copies), else its copy.
func Held(o Options, direct bool) Options {
	o.held, o.direct = true, direct
	return o
}

// AfterCopy makes Read call fn once the snapshot is taken, before it walks it.
func AfterCopy(o Options, fn func()) Options {
	o.afterCopy = fn
	return o
}
