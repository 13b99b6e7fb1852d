package modproxy

// Pinned is a module of this repository, nested in its own directory, that the tool's module
// requires at a version: the commit that last changed it, as a pseudo-version, until it is
// tagged (docs/releasing.md). go.work replaces that version with the directory.
type Pinned struct {
	Path string // the module's path
	Dir  string // its directory in the repository, with slashes
	// Nested are the directories under Dir that hold modules of their own: a change there is
	// not a change of this module.
	Nested []string
	// RequiredBy are the directories of the repository's modules that require it.
	RequiredBy []string
}

// PinnedModules are the nested modules the tool requires: the agent's (also required by
// agent/prom) and leaktest's (whose trend package the diagnosis shares).
var PinnedModules = []Pinned{
	{Path: "github.com/memdoctor/memdoctor/agent", Dir: "agent", Nested: []string{"agent/prom"}, RequiredBy: []string{".", "agent/prom"}},
	{Path: "github.com/memdoctor/memdoctor/leaktest", Dir: "leaktest", RequiredBy: []string{"."}},
}

// Pathspec is the git pathspec of the module's own files: its directory without its nested
// modules'.
func (p Pinned) Pathspec() []string {
	spec := []string{p.Dir}
	for _, n := range p.Nested {
		spec = append(spec, ":(exclude)"+n)
	}
	return spec
}
