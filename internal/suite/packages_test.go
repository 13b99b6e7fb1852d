package suite

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The tests are found as go test finds them: TestXxx taking one *T, not TestMain, not a
// method, not generic, not Testing, in the order of the file.
func TestAppendTests(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x_test.go")
	os.WriteFile(file, []byte(`package x

import (
	"testing"
	tt "testing"
)

func TestMain(m *testing.M) {}
func TestA(t *testing.T) {}
func Testing(t *testing.T) {}
func Test(t *testing.T) {}
func Test_b(t *tt.T) {}
func TestÉ(t *testing.T) {}
func TestTwo(t *testing.T, n int) {}
func TestResult(t *testing.T) error { return nil }
func TestGeneric[T any](t *testing.T) {}
func (s suite) TestMethod(t *testing.T) {}
func TestBench(b *testing.B) {}
func helper(t *testing.T) {}
func TestLast(t *T) {}

type suite struct{}
type T = testing.T
`), 0o644)
	var names []string
	for _, tf := range appendTests(nil, file) {
		names = append(names, tf.Name)
		if tf.File != file || tf.Line == 0 {
			t.Errorf("%s at %s:%d", tf.Name, tf.File, tf.Line)
		}
	}
	if want := []string{"TestA", "Test", "Test_b", "TestÉ", "TestLast"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tests %q, want %q", names, want)
	}
	if got := appendTests(nil, filepath.Join(dir, "missing_test.go")); len(got) != 0 {
		t.Errorf("a missing file gave tests %v", got)
	}
}

func TestCompareGo(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.22", "1.22", 0}, {"1.21", "1.22", -1}, {"1.22.3", "1.22", 1}, {"1.23rc1", "1.22", 1}, {"1.9", "1.22", -1}, {"2", "1.30", 1},
	} {
		if got := compareGo(tc.a, tc.b); got != tc.want {
			t.Errorf("compareGo(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestModulePath(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"module example.com/m\n\ngo 1.22\n", "example.com/m"},
		{"// a comment\nmodule \"example.com/quoted\" // deprecated\n", "example.com/quoted"},
		{"modules example.com/no\n", ""},
	} {
		p := filepath.Join(dir, "go.mod")
		os.WriteFile(p, []byte(tc.text), 0o644)
		if got := modulePath(p); got != tc.want {
			t.Errorf("modulePath(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// The workspace is the user's modules and memdoctor's leaktest, its paths absolute, its go line
// the newest of the user's and leaktest's least.
func TestWorkspaceWrite(t *testing.T) {
	dir := t.TempDir()
	w := &workspace{Go: "1.24", Toolchain: "go1.26.1", Godebug: [][2]string{{"http2client", "0"}}, Use: []string{"/src/m", "/src/lib"},
		Replace: []workReplace{{Old: workModule{Path: "example.com/old", Version: "v1.0.0"}, New: workModule{Path: "/src/fork"}}}}
	path, err := w.write(dir, "/cache/leaktest")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	golden(t, "go.work.golden", got)
}

// The harness file hands the package's tests to the harness under names no package can clash
// with.
func TestHarnessFile(t *testing.T) {
	golden(t, "harness_test.go.golden", []byte(harnessFile("broker_test", harnessTestX, []TestFunc{{Name: "TestA"}, {Name: "Test_b"}})))
}
