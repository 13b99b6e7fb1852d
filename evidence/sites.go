package evidence

import (
	"github.com/memdoctor/memdoctor/culprit"
)

// What profiles say, by site: the program's own code that allocates, retains or blocks. The
// types are culprit's, named here so that rules need nothing but this package.
type (
	// Site is one piece of code: a function, its heaviest line, whether it is the program's
	// own.
	Site = culprit.Site
	// SiteTable is one sample type of one profile summed by site.
	SiteTable = culprit.Table
	// SiteEntry is one site of a table.
	SiteEntry = culprit.Entry
	// SiteDiff is one sample type compared between two profiles, by site.
	SiteDiff = culprit.DiffResult
	// SiteDelta is one site of a diff.
	SiteDelta = culprit.Delta
	// Caller is a function of the program's own code with what the stacks through it hold
	// (as pprof's -cum): the sites under it.
	Caller = culprit.Caller
	// GoroutineGroup is the goroutines blocked at one site (recursion and runtime frames
	// collapsed).
	GoroutineGroup = culprit.SiteGroup
	// StackGroup is the goroutines with one stack: a site's representative member.
	StackGroup = culprit.GoroutineGroup
)

// SharedCaller is the function of the program's own code that the sites under callers
// share (callers as a SiteDiff's or a SiteTable's ByCaller list them): the deepest that holds
// nearly all that the heaviest caller holds; ok is false when no caller is over two sites.
func SharedCaller(callers []Caller) (Caller, bool) { return culprit.Shared(callers) }

// HeapSites sums one sample type of a heap snapshot by site ("inuse_space", "alloc_space",
// ...). Tables are kept: they are small.
func (ev *Evidence) HeapSites(s Snapshot, typ string) (*SiteTable, error) {
	st := ev.profiles
	st.mu.Lock()
	defer st.mu.Unlock()
	key := tableKey{s.Path, typ}
	if t, ok := st.tables[key]; ok {
		return t, nil
	}
	p, err := st.getLocked(s.Path)
	if err != nil {
		return nil, err
	}
	t, err := culprit.Aggregate(p, typ, st.opts)
	if err != nil {
		return nil, err
	}
	if len(st.tables) >= maxTables {
		clear(st.tables)
	}
	st.tables[key] = t
	return t, nil
}

// HeapDiff compares one sample type between two heap snapshots, by site.
func (ev *Evidence) HeapDiff(old, new Snapshot, typ string) (*SiteDiff, error) {
	st := ev.profiles
	st.mu.Lock()
	defer st.mu.Unlock()
	op, err := st.getLocked(old.Path)
	if err != nil {
		return nil, err
	}
	np, err := st.getLocked(new.Path)
	if err != nil {
		return nil, err
	}
	return culprit.Diff(op, np, typ, st.opts)
}

// GoroutineSites groups a goroutine or goroutineleak snapshot by site, most goroutines first.
func (ev *Evidence) GoroutineSites(s Snapshot) ([]GoroutineGroup, error) {
	st := ev.profiles
	st.mu.Lock()
	defer st.mu.Unlock()
	if g, ok := st.groups[s.Path]; ok {
		return g, nil
	}
	p, err := st.getLocked(s.Path)
	if err != nil {
		return nil, err
	}
	if g, ok := st.groups[s.Path]; ok { // a goroutine dump: parsing it kept its groups
		return g, nil
	}
	if st.dumps[s.Path] { // a dump whose groups were dropped: its profile lost the wait states
		if _, err := st.parse(s.Path); err != nil {
			return nil, err
		}
		return st.groups[s.Path], nil
	}
	groups, err := culprit.GroupGoroutineProfile(p, st.opts)
	if err != nil {
		return nil, err
	}
	sites := culprit.GroupBySite(groups)
	if len(st.groups) >= maxTables {
		clear(st.groups)
	}
	st.groups[s.Path] = sites
	return sites, nil
}

// EachStack calls fn for every sample of one sample type of a heap snapshot, with its site
// and stack (leaf first): rules match allocation patterns on stacks.
func (ev *Evidence) EachStack(s Snapshot, typ string, fn func(site Site, stack []string, v int64)) error {
	st := ev.profiles
	st.mu.Lock()
	p, err := st.getLocked(s.Path)
	opts := st.opts
	st.mu.Unlock()
	if err != nil {
		return err
	}
	idx, err := culprit.SampleIndex(p, typ)
	if err != nil {
		return err
	}
	for _, smp := range p.Sample {
		if idx >= len(smp.Value) {
			continue
		}
		site, stack := culprit.Attribute(smp.Location, opts)
		fn(site, stack, smp.Value[idx])
	}
	return nil
}

// EachFrames calls fn for every sample of one sample type of a heap snapshot, with its
// frames (leaf first), each with its function, file and line: where the program called a
// library, at which line.
func (ev *Evidence) EachFrames(s Snapshot, typ string, fn func(frames []Site, v int64)) error {
	st := ev.profiles
	st.mu.Lock()
	p, err := st.getLocked(s.Path)
	st.mu.Unlock()
	if err != nil {
		return err
	}
	idx, err := culprit.SampleIndex(p, typ)
	if err != nil {
		return err
	}
	for _, smp := range p.Sample {
		if idx < len(smp.Value) {
			fn(culprit.Frames(smp.Location), smp.Value[idx])
		}
	}
	return nil
}

// Program reports whether function is the program's own code: in its main module when that
// is known, else outside the runtime and the standard library.
func (ev *Evidence) Program(function string) bool {
	return culprit.Program(function, culprit.Options{MainModule: ev.Target.MainModule})
}

// StartFunction is a goroutine's start function: the root-most frame of its stack (leaf
// first) outside the runtime; "" when there is none.
func StartFunction(stack []string) string { return culprit.StartFunction(stack) }

// PackagePath is the import path of the package that defines function ("" when none).
func PackagePath(function string) string { return culprit.PackagePath(function) }

// ModuleRoot is the shortest path the module of a package outside the standard library
// could have (a library's packages share it); a standard library package's is the package.
func ModuleRoot(pkg string) string { return culprit.ModuleRoot(pkg) }

// IsStdlib reports whether function is the standard library's (the runtime's included).
func IsStdlib(function string) bool { return culprit.IsStdlib(function) }

// IsRuntime reports whether function is the Go runtime's.
func IsRuntime(function string) bool { return culprit.IsRuntime(function) }

// Running reports whether a goroutine's stack shows it running or runnable, never parked
// (culprit.Running).
func Running(stack []string) bool { return culprit.Running(stack) }
