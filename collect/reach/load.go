package reach

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// program is the summaries of the functions of the packages loaded so far, for one query.
type program struct {
	dir    string
	funcs  map[string]*summary // by plain name
	loaded map[string]bool     // package paths loaded (or that failed)
	// into are the packages of the query's start functions and creators: a call is followed
	// only into a package that is one of them or imports one (directly or not), which is
	// known from the caller's types before the callee's package is loaded.
	into    map[string]bool
	imports map[*types.Package]bool
}

// leadsInto reports whether pkg is one of p.into or imports one, directly or not.
func (p *program) leadsInto(pkg *types.Package) bool {
	if pkg == nil {
		return false
	}
	if v, ok := p.imports[pkg]; ok {
		return v
	}
	p.imports[pkg] = false // a cycle adds nothing
	v := p.into[pkg.Path()]
	for _, imp := range pkg.Imports() {
		if v {
			break
		}
		v = p.leadsInto(imp)
	}
	p.imports[pkg] = v
	return v
}

// summary is what a function does that matters here: the functions it calls statically, at
// which line, and those its go statements start. The calls inside its function literals count
// as its own (they run when it calls them, or start goroutines of their own).
type summary struct {
	calls []call
	gos   []string
	// callLines are the lines that hold a call of any kind (interfaces' included).
	callLines map[int64]bool
}

type call struct {
	callee string // its name (canonical)
	pkg    string // its package's import path
	line   int64
}

const mode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo

// config is how the go command is run: on what is on disk only. The paths come from a
// profile, which the target wrote: `go list` must neither reach the network (GOPROXY=off)
// nor fetch another toolchain a go.mod asks for (GOTOOLCHAIN=local), whatever the directory.
func (p *program) config(ctx context.Context) *packages.Config {
	return &packages.Config{Context: ctx, Dir: p.dir, Mode: mode,
		Env: append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GONOSUMDB=*", "GOFLAGS=-mod=readonly")}
}

// loadFile loads the package of file, whose functions' calls are asked for.
func (p *program) loadFile(ctx context.Context, file string) error {
	pkgs, err := packages.Load(p.config(ctx), "file="+file)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoSource, err)
	}
	if len(pkgs) == 0 || len(pkgs[0].Syntax) == 0 || pkgs[0].TypesInfo == nil {
		return fmt.Errorf("%w: go list found no package of %s", ErrNoSource, file)
	}
	for _, pkg := range pkgs {
		p.add(pkg)
	}
	return nil
}

// summary returns fn's summary, loading its package (pkg) first; nil when it is not known (its
// package could not be loaded, the bound on packages was reached, or it has no body: an
// interface's method, assembly).
func (p *program) summary(ctx context.Context, fn, pkg string) *summary {
	if s, ok := p.funcs[fn]; ok {
		return s
	}
	if pkg == "" || p.loaded[pkg] || len(p.loaded) >= maxPackages || ctx.Err() != nil {
		return nil
	}
	p.loaded[pkg] = true
	pkgs, err := packages.Load(p.config(ctx), pkg)
	if err == nil {
		for _, lp := range pkgs {
			p.add(lp)
		}
	}
	return p.funcs[fn]
}

// add summarizes every function of a loaded package; its syntax and types are let go of
// with it.
func (p *program) add(pkg *packages.Package) {
	p.loaded[pkg.PkgPath] = true
	if pkg.TypesInfo == nil || pkg.Types == nil {
		return
	}
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			obj, ok := pkg.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			name := funcName(obj)
			if name == "" {
				continue
			}
			p.funcs[name] = p.summarize(pkg.Fset, pkg.TypesInfo, name, fd.Body)
		}
	}
}

// summarize lists the static calls and go statements of a function's body. Function literals
// are named as the compiler names them (F.func1, F.func2, ... in the order they appear; a
// literal inside a literal F.func1.1), so that a go statement starting one matches the
// goroutines' start function.
func (p *program) summarize(fset *token.FileSet, info *types.Info, name string, body *ast.BlockStmt) *summary {
	s := &summary{callLines: map[int64]bool{}}
	lits := map[*ast.FuncLit]string{}
	var number func(n ast.Node, outer string)
	number = func(n ast.Node, outer string) {
		k := 0
		ast.Inspect(n, func(c ast.Node) bool {
			if lit, ok := c.(*ast.FuncLit); ok && c != n {
				k++
				lits[lit] = outer + ".func" + strconv.Itoa(k)
				if outer != name {
					lits[lit] = outer + "." + strconv.Itoa(k)
				}
				number(lit.Body, lits[lit])
				return false
			}
			return true
		})
	}
	number(body, name)
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if lit, ok := ast.Unparen(n.Call.Fun).(*ast.FuncLit); ok {
				s.gos = append(s.gos, lits[lit])
			} else if fn := calleeOf(info, n.Call); fn != nil {
				s.gos = append(s.gos, funcName(fn))
			}
		case *ast.CallExpr:
			s.callLines[int64(fset.Position(n.Lparen).Line)] = true
			if fn := calleeOf(info, n); fn != nil && p.leadsInto(fn.Pkg()) {
				if callee := funcName(fn); callee != "" {
					s.calls = append(s.calls, call{callee: callee, pkg: fn.Pkg().Path(), line: int64(fset.Position(n.Lparen).Line)})
				}
			}
		}
		return true
	})
	return s
}

// calleeOf is the function a call calls statically: a package's function, or a method of a
// concrete type; nil for a call through an interface or a function value, a conversion, a
// builtin.
func calleeOf(info *types.Info, c *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[f]; ok && sel.Kind() == types.MethodVal {
			if types.IsInterface(sel.Recv()) {
				return nil
			}
		}
		id = f.Sel
	case *ast.IndexExpr: // a generic function instantiated explicitly
		if x, ok := ast.Unparen(f.X).(*ast.Ident); ok {
			id = x
		} else if x, ok := ast.Unparen(f.X).(*ast.SelectorExpr); ok {
			id = x.Sel
		}
	}
	if id == nil {
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	return fn
}

// funcName names a function as profiles do, without type arguments and with the dots of its
// package path as they are (canonical): "pkg.F", "pkg.(*T).M", "pkg.T.M"; "" for an
// interface's method.
func funcName(fn *types.Func) string {
	fn = fn.Origin()
	if fn.Pkg() == nil {
		return ""
	}
	pkg := fn.Pkg().Path()
	if fn.Pkg().Name() == "main" { // profiles name a command's functions main.F
		pkg = "main"
	}
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return pkg + "." + fn.Name()
	}
	t := sig.Recv().Type()
	ptr := false
	if p, ok := t.(*types.Pointer); ok {
		t, ptr = p.Elem(), true
	}
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || types.IsInterface(named) {
		return ""
	}
	if ptr {
		return pkg + ".(*" + named.Obj().Name() + ")." + fn.Name()
	}
	return pkg + "." + named.Obj().Name() + "." + fn.Name()
}

// canonical is a profile's function name as funcName spells it: no type arguments, and the
// linker's escapes of the dots in the package path's last element undone
// ("github.com/nats-io/nats%2ego.Connect" is "github.com/nats-io/nats.go.Connect").
func canonical(name string) string { return strings.ReplaceAll(plain(name), "%2e", ".") }
