package suite

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit XML, as GitHub Actions' test reporters, GitLab (artifacts:reports:junit) and Jenkins
// (the junit step) read it: a testsuite per package, a testcase per test checked, a failure
// for a leak, skipped (with the reason) for a test not judged, and an error for a package that
// could not be checked (its build's message).

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the result as JUnit XML; files are named relative to base.
func WriteJUnit(w io.Writer, r *Result, base string) error {
	all := junitSuites{Name: "memdoctor test", Time: secs(r.Elapsed.Seconds())}
	for _, p := range r.Packages {
		if p.Status == StatusNoTests {
			continue
		}
		s := junitSuite{Name: p.Package, Time: secs(p.Elapsed.Seconds())}
		if p.Status == StatusBuildFailed || p.Status == StatusError || p.Status == StatusInterrupted && len(p.Tests) == 0 {
			what := map[string]string{StatusBuildFailed: "build failed", StatusError: "could not check", StatusInterrupted: "interrupted"}[p.Status]
			s.Errors++
			s.Cases = append(s.Cases, junitCase{Name: "[" + what + "]", Classname: p.Package, Time: secs(p.Elapsed.Seconds()),
				Error: &junitMessage{Message: what + ": " + firstErrorLine(p.Error), Type: p.Status, Text: p.Error}})
		}
		for _, t := range p.Tests {
			c := junitCase{Name: t.Name, Classname: p.Package, Time: secs(t.Elapsed.Seconds()), File: relPath(base, t.File), Line: t.Line}
			switch t.Verdict {
			case VerdictLeak:
				s.Failures++
				c.Failure = &junitMessage{Message: firstLine(t.Message), Type: "leak", Text: t.Message}
			case VerdictNotJudged:
				s.Skipped++
				text := t.Reason
				if t.Output != "" {
					text += "\n\n" + lastN(t.Output, 40)
				}
				c.Skipped = &junitMessage{Message: "not judged: " + firstLine(t.Reason), Text: text}
			default:
				c.SystemOut = t.Message
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		all.Tests, all.Failures, all.Errors, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Errors+s.Errors, all.Skipped+s.Skipped
		all.Suites = append(all.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// firstErrorLine is the first line of go's message that is not a "# package" heading.
func firstErrorLine(msg string) string {
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return firstLine(msg)
}

func secs(s float64) string { return strings.TrimSuffix(fmt.Sprintf("%.3f", s), "0") }
