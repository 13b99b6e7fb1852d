package words

import "fmt"

// Figures as a person reads them: no scientific notation, no ratio that a near-zero start
// blew up (TestFiguresAreReadable, in package report, renders every kept recording's report
// and rejects them).

// pValue is a p-value as people read it: under a thousandth, "p<0.001"; else two
// significant digits ("p=0.014").
func pValue(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.2g", p)
}

// fromNothing: a rate that rose more than this many times over rose from next to nothing.
// Its start is a sample or two of a heap profile (one every 512 KiB allocated), not a rate
// a ratio can be read from: the two rates are said instead.
const fromNothing = 100
