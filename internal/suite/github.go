package suite

import (
	"fmt"
	"io"
	"strings"
)

// WriteAnnotations writes a GitHub Actions workflow command per leak, on the test's line
// (::error file=F,line=N,title=T::MESSAGE), files relative to base (the workspace).
func WriteAnnotations(w io.Writer, r *Result, base string) {
	for _, p := range r.Packages {
		for _, t := range p.Tests {
			if t.Verdict != VerdictLeak {
				continue
			}
			fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n", ghProperty(relPath(base, t.File)), t.Line,
				ghProperty("leak in "+t.Name), ghData(t.Message))
		}
	}
}

// ghData escapes a workflow command's message.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
