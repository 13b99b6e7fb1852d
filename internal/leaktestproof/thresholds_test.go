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
	consts := constsOf(t, "../../leaktest/judge.go")
	tr := rule.Default.Trend
	for name, want := range map[string]float64{
		"confirmP": tr.ConfirmP, "confirmTau": tr.ConfirmTau, "confirmSNR": tr.ConfirmSNR,
		"strongP": tr.StrongP, "strongSNR": tr.StrongSNR,
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
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					v, _ := constant.Float64Val(constant.MakeFromLiteral(lit.Value, lit.Kind, 0))
					out[name.Name] = v
				}
			}
		}
	}
	return out
}
