package leaktestproof

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"testing"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

// TestThresholdsAreTheDiagnosis: leaktest judges a growth with the thresholds of memdoctor's
// diagnosis (diagnose/rule's Default.Trend), copied into its judge.go as constants since it
// may import nothing of memdoctor's. A change to one must be made to the other.
func TestThresholdsAreTheDiagnosis(t *testing.T) {
	consts := constsOf(t, "../../../leaktest/judge.go")
	tr := rule.Default.Trend
	for name, want := range map[string]float64{
		"confirmTau": tr.ConfirmTau, "confirmSNR": tr.ConfirmSNR,
		"suspectP": tr.SuspectP, "suspectTau": tr.SuspectTau,
		"minConfirmPoints": float64(tr.MinConfirmPoints),
		"lateRising":       tr.LateRising, "lateSlowing": tr.LateSlowing,
		"minLateShare": tr.MinLateShare, "lateSlowingShare": tr.LateSlowingShare,
		"projectMinShare": tr.ProjectMinShare,
	} {
		got, ok := consts[name]
		if !ok {
			t.Errorf("leaktest/judge.go has no constant %s", name)
			continue
		}
		if got != want {
			t.Errorf("leaktest's %s is %g, the diagnosis's %g", name, got, want)
		}
	}
	// The sequential boundary: leaktest's boundary5 ... boundaryLater are Trend.Boundary's
	// levels in turn, from five readings on.
	levels := []string{"boundary5", "boundary6", "boundary7", "boundaryLater"}
	if len(tr.Boundary) != len(levels) || tr.MinConfirmPoints != 5 {
		t.Fatalf("the diagnosis's boundary has %d levels from %d readings: leaktest/judge.go has %d from 5",
			len(tr.Boundary), tr.MinConfirmPoints, len(levels))
	}
	for i, name := range levels {
		if got, ok := consts[name]; !ok || got != tr.Boundary[i] {
			t.Errorf("leaktest's %s is %g (declared: %v), the diagnosis's level %d %g", name, got, ok, i, tr.Boundary[i])
		}
	}
}

// constsOf evaluates the untyped numeric constants a Go file declares.
func constsOf(t *testing.T, path string) map[string]float64 {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				if v, ok := constOf(vs.Values[i]); ok {
					f, _ := constant.Float64Val(constant.ToFloat(v))
					out[name.Name] = f
				}
			}
		}
	}
	return out
}

// constOf evaluates a numeric literal or an arithmetic expression of them (1.0 / 120).
func constOf(e ast.Expr) (constant.Value, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		return constant.MakeFromLiteral(e.Value, e.Kind, 0), true
	case *ast.ParenExpr:
		return constOf(e.X)
	case *ast.BinaryExpr:
		x, ok1 := constOf(e.X)
		y, ok2 := constOf(e.Y)
		if !ok1 || !ok2 {
			return nil, false
		}
		return constant.BinaryOp(x, e.Op, y), true
	}
	return nil, false
}
