package walk

import (
	"reflect"
	"strings"

	"github.com/memdoctor/memdoctor/holders"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
	"github.com/memdoctor/memdoctor/process"
)

// stackRoot names a stack slot by the local variable that holds it: by its address when the
// variable lives in the frame as a whole, else by the pointer it holds (a variable the
// compiler split between registers and spill slots).
func (n *namer) stackRoot(r root) (holders.Root, leaf, view) {
	if r.ref < 0 {
		return holders.Root{Kind: "goroutine", Name: "stack"}, leaf{}, view{}
	}
	fr := n.st.frames[r.ref]
	g := n.st.gs[fr.g]
	root := holders.Root{Kind: "goroutine", Name: fr.fn, Goroutine: g.id, Wait: g.wait}
	if val, err := n.h.cache.Word(r.addr); err == nil && n.ownClosure(fr, val) {
		// The frame's own closure context: its captured variables read as its locals.
		return root, leaf{typ: &godwarf.FuncType{}, own: true}, view{}
	}
	vars := n.frameLocals(int(r.ref))
	for _, v := range vars {
		if v.Flags&proc.VariableFakeAddress != 0 || v.DwarfType == nil {
			continue
		}
		size := uint64(max(sizeOf(v.DwarfType), 8))
		if r.addr >= v.Addr && r.addr < v.Addr+size {
			root.Var, root.Type = v.Name, typeName(v.DwarfType)
			return root, locate(view{typ: v.DwarfType}, int64(r.addr-v.Addr), n.ix), view{typ: v.DwarfType}
		}
	}
	if val, err := n.h.cache.Word(r.addr); err == nil {
		for _, v := range vars {
			if v.Flags&proc.VariableEscaped != 0 && v.Addr == val && v.DwarfType != nil {
				// A variable moved to the heap (a closure captured it): the slot holds its cell.
				root.Var, root.Type = v.Name, typeName(v.DwarfType)
				return root, leaf{typ: &godwarf.PtrType{CommonType: godwarf.CommonType{ByteSize: 8}, Type: v.DwarfType}}, view{}
			}
			if expr, typ, ok := holdsPointer(v, val, 0); ok {
				root.Var, root.Type = v.Name, typeName(v.DwarfType)
				root.Guess = "the frame's slot holds the pointer variable " + v.Name + " holds (a copy the compiler made)"
				return root, leaf{expr: expr, typ: typ}, view{}
			}
		}
	}
	// A slot of a stack object (a struct the compiler kept on the stack): named through a
	// pointer variable that points at it, in this frame or a callee's.
	if obj, ok := n.stackObjectAt(int(r.ref), r.addr); ok {
		for _, fi := range n.goroutineFrames(fr.g, int(r.ref)) {
			for _, v := range n.frameLocals(fi) {
				if v.Kind != reflect.Ptr || len(v.Children) == 0 || v.Children[0].DwarfType == nil || v.Children[0].Addr != obj.addr {
					continue
				}
				pointee := resolve(v.Children[0].DwarfType)
				owner := n.st.frames[fi]
				root.Name, root.Var, root.Type = owner.fn, v.Name, typeName(v.DwarfType)
				return root, locate(view{typ: pointee}, int64(r.addr-obj.addr), n.ix), view{typ: pointee}
			}
		}
	}
	if name, typ, ok := n.capturedHolding(fr, r.val); ok {
		root.Var, root.Type = name, typeName(typ)
		root.Guess = "a temporary of the closure, taken for its captured variable " + name + ", the only one pointing to a " + strings.TrimPrefix(typeName(typ), "*")
		return root, leaf{typ: typ}, view{}
	}
	if fr.conservative {
		root.Var = "(unnamed word)"
	} else {
		root.Var = "(temporary)"
	}
	return root, leaf{}, view{}
}

// holdsPointer finds, in a loaded variable, the value that is the pointer val: the
// expression that names it within the variable, and its type.
func holdsPointer(v *proc.Variable, val uint64, depth int) (string, godwarf.Type, bool) {
	if v == nil || depth > 4 {
		return "", nil, false
	}
	switch v.Kind {
	case reflect.Ptr, reflect.UnsafePointer:
		if len(v.Children) > 0 && v.Children[0].Addr == val {
			return "", v.DwarfType, true
		}
	case reflect.Slice, reflect.String, reflect.Chan, reflect.Map:
		if v.Base == val {
			return "", v.DwarfType, true
		}
	case reflect.Interface:
		if len(v.Children) > 0 {
			c := &v.Children[0]
			if e, t, ok := holdsPointer(c, val, depth+1); ok {
				return ".(" + typeName(c.DwarfType) + ")" + e, t, true
			}
		}
	case reflect.Struct:
		for i := range v.Children {
			c := &v.Children[i]
			if e, t, ok := holdsPointer(c, val, depth+1); ok {
				return "." + c.Name + e, t, true
			}
		}
	case reflect.Array:
		for i := range v.Children {
			if e, t, ok := holdsPointer(&v.Children[i], val, depth+1); ok {
				return "[i]" + e, t, true
			}
		}
	}
	return "", nil, false
}

// stackObjectAt finds the live stack object of frame fi that holds addr.
func (n *namer) stackObjectAt(fi int, addr uint64) (stackObject, bool) {
	for _, o := range n.st.objects[fi] {
		if addr >= o.addr && addr < o.addr+o.size {
			return o, true
		}
	}
	return stackObject{}, false
}

// capturedHolding names a closure frame's temporary by the variable the closure captured that
// it is a copy of: the one captured pointer whose pointee has the type of the object the word
// points to (typed by its allocation header). The compiler loads captured variables into
// temporaries that DWARF does not describe at every pc.
func (n *namer) capturedHolding(fr frame, val uint64) (string, godwarf.Type, bool) {
	cvs := n.ix.Closure(fr.fn)
	if len(cvs) == 0 {
		return "", nil, false
	}
	si, id, ok := n.h.find(val)
	if !ok {
		return "", nil, false
	}
	sp := &n.h.spans[si]
	obj := n.headerView(sp.base+uint64(id-sp.firstID)*sp.elemSize, sp)
	if obj.typ == nil {
		return "", nil, false
	}
	want := typeName(obj.typ)
	var name string
	var typ godwarf.Type
	for _, c := range cvs {
		if p, ok := resolve(c.Type).(*godwarf.PtrType); ok && typeName(resolve(p.Type)) == want {
			if typ != nil {
				return "", nil, false // two candidates: no guess
			}
			name, typ = strings.TrimPrefix(c.Name, "&"), c.Type
		}
	}
	return name, typ, typ != nil
}

// ownClosure says whether val points at the closure context of the frame's own function (a
// funcval whose code is that function).
func (n *namer) ownClosure(fr frame, val uint64) bool {
	f, ok := n.tab.FuncForPC(fr.pc)
	if !ok || !strings.Contains(f.Name, ".func") {
		return false
	}
	if _, _, ok := n.h.find(val); !ok {
		return false
	}
	fn, err := n.h.cache.Word(val)
	return err == nil && fn == f.Entry
}

// goroutineFrames lists the frames of goroutine gi that hold roots, first, the frame fi.
func (n *namer) goroutineFrames(gi, fi int) []int {
	out := []int{fi}
	for i, f := range n.st.frames {
		if f.g == gi && i != fi {
			out = append(out, i)
		}
	}
	return out
}

// frameLocals lists, loaded, the local variables and arguments of a frame (its own and those
// of the calls inlined into it at its pc).
func (n *namer) frameLocals(fi int) []*proc.Variable {
	if vs, ok := n.locals[fi]; ok {
		return vs
	}
	fr := n.st.frames[fi]
	g := n.st.gs[fr.g]
	var out []*proc.Variable
	cfg := proc.LoadConfig{MaxVariableRecurse: 2, MaxArrayValues: 16, MaxStructFields: -1}
	if dg := n.dgs[g.id]; dg != nil {
		var frames []proc.Stackframe
		err := process.Safely(func() (err error) {
			frames, err = proc.GoroutineStacktrace(n.t.Delve, dg, fr.depth+1, 0)
			return err
		})
		if err == nil && fr.depth < len(frames) {
			tid := 0
			if dg.Thread != nil {
				tid = dg.Thread.ThreadID()
			}
			for d := fr.depth; d >= 0; d-- {
				if d < fr.depth && !frames[d].Inlined {
					break
				}
				process.Safely(func() error {
					scope := proc.FrameToScope(n.t.Delve, n.t.Delve.Memory(), dg, tid, frames[d:]...)
					args, _ := scope.FunctionArguments(cfg)
					vars, _ := scope.LocalVariables(cfg)
					out = append(out, args...)
					out = append(out, vars...)
					return nil
				})
			}
		}
	}
	n.locals[fi] = out
	return out
}
