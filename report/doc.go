// Package report renders diagnoses and profile diffs for people: a compact terminal report
// that can be read in ten seconds, and (see html.go) a self-contained HTML page.
package report
