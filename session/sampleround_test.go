package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fillEvery sets every field of the struct v points to, and of the structs its pointer fields
// lead to, to a value no other field has: the n-th field set gets n, as its kind allows.
func fillEvery(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		*n++
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			fillEvery(t, f.Elem(), n)
		case reflect.Int:
			f.SetInt(int64(*n))
		case reflect.Uint64:
			f.SetUint(uint64(*n) << 33)
		case reflect.Float64:
			f.SetFloat(float64(*n) + 0.25)
		case reflect.String:
			f.SetString("s" + strings.Repeat("x", *n))
		case reflect.Struct:
			if f.Type() != reflect.TypeFor[time.Time]() {
				t.Fatalf("%s: a struct the test does not fill", v.Type().Field(i).Name)
			}
			f.Set(reflect.ValueOf(time.Unix(int64(*n)*1000, 5).UTC()))
		default:
			t.Fatalf("%s.%s is a %s: teach the test to fill it", v.Type(), v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestSampleRoundTripEveryField: every field of a sample the writer writes, with a value of
// its own, comes back from the decoder, and the decoder knows every key the writer writes. A
// field added to Sample but not to the decoder fails here, by name.
func TestSampleRoundTripEveryField(t *testing.T) {
	var want Sample
	n := 0
	fillEvery(t, reflect.ValueOf(&want).Elem(), &n)
	line, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var d sampleDecoder
	got, err := d.decode(line)
	if err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if d.unknownN != 0 {
		t.Errorf("the decoder does not know %v, which the writer writes", d.unknown)
	}
	compare(t, "Sample", reflect.ValueOf(*got), reflect.ValueOf(want))
}

// compare reports each field that differs, by its path.
func compare(t *testing.T, path string, got, want reflect.Value) {
	t.Helper()
	switch want.Kind() {
	case reflect.Pointer:
		if got.IsNil() {
			t.Errorf("%s: not decoded", path)
			return
		}
		compare(t, path, got.Elem(), want.Elem())
	case reflect.Struct:
		if want.Type() == reflect.TypeFor[time.Time]() {
			if !got.Interface().(time.Time).Equal(want.Interface().(time.Time)) {
				t.Errorf("%s: %v, want %v", path, got, want)
			}
			return
		}
		for i := 0; i < want.NumField(); i++ {
			compare(t, path+"."+want.Type().Field(i).Name, got.Field(i), want.Field(i))
		}
	default:
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("%s: %v, want %v: the decoder drops or misreads it", path, got, want)
		}
	}
}

// An unknown key, at the top or in a part, is skipped and counted by name: a reader older
// than its writer says what it could not read.
func TestUnknownKeysCounted(t *testing.T) {
	var d sampleDecoder
	for _, line := range []string{
		`{"t":"2026-11-22T10:00:00Z","go":{"source":"memstats","heap_new_bytes":5},"extra":[1,{"a":2}]}`,
		`{"t":"2026-11-22T10:00:01Z","go":{"heap_new_bytes":6}}`,
	} {
		if _, err := d.decode([]byte(line)); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	if d.unknownN != 3 || !d.unknown["go.heap_new_bytes"] || !d.unknown["extra"] {
		t.Errorf("counted %d unknown key(s) %v, want 3 of go.heap_new_bytes and extra", d.unknownN, d.unknown)
	}
	st := ReadStats{Unknown: 3, UnknownKeys: []string{"extra", "go.heap_new_bytes"}}
	if w := st.Warning(MetricsFile); !strings.Contains(w, "3 value(s)") || !strings.Contains(w, "go.heap_new_bytes") {
		t.Errorf("warning %q does not say what was skipped", w)
	}
}
