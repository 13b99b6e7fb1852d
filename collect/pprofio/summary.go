package pprofio

import (
	"errors"
	"fmt"
	"math"

	"github.com/google/pprof/profile"
)

// Summary is what a profile adds up to: its sample types with the sum of each over every
// sample, when it was taken, and its main binary. It is what reading a series of hundreds of
// profiles needs, without their stacks.
type Summary struct {
	SampleTypes       []ValueType
	PeriodType        ValueType
	Period            int64
	DefaultSampleType string
	// Totals holds, for each sample type, the sum of its values over all samples (saturating
	// at the int64 range).
	Totals  []int64
	Samples int
	// TimeNanos is when the profile was taken (0 = it does not say); DurationNanos the window
	// it covers (a delta profile, as from ?seconds=N) or the time writing it took.
	TimeNanos, DurationNanos int64
	// MainBinary and BuildID are the first mapping's file name and build ID ("" = none).
	MainBinary, BuildID string
}

// ValueType is a sample type or the period type: "inuse_space"/"bytes".
type ValueType struct{ Type, Unit string }

// Total returns the total of sample type typ, and whether the profile has it.
func (s *Summary) Total(typ string) (int64, bool) {
	for i, st := range s.SampleTypes {
		if st.Type == typ {
			return s.Totals[i], true
		}
	}
	return 0, false
}

// maxSampleTypes bounds the sample types a summary keeps (real profiles have at most a few).
const maxSampleTypes = 64

// Summarize reads the summary of data, an uncompressed protobuf profile, in two passes over
// its encoding that decode no stack and allocate nothing per sample: about twenty times faster than profile.ParseData and
// without its allocations. It fails with an error wrapping ErrNotProfile on bytes that are
// not a well-formed protobuf profile (the legacy text formats among them: parse those with
// ParseData and summarize the result with SummaryOf), and, as pprof's own check does, on a
// sample whose number of values is not the number of sample types.
func Summarize(name string, data []byte) (*Summary, error) {
	if isGzip(data) {
		return nil, twiceErr(name)
	}
	s, err := summarize(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrNotProfile, err)
	}
	return s, nil
}

// summary indexes: what the first pass finds, as indices in the string table.
type summaryRefs struct {
	types           [][2]int64 // type, unit
	period          [2]int64
	dflt            int64
	binary, buildID int64
	mapped          bool
}

func summarize(data []byte) (*Summary, error) {
	if len(data) == 0 {
		return nil, errors.New("empty")
	}
	s := &Summary{}
	var refs summaryRefs
	nStrings := int64(0)
	for b := data; len(b) > 0; {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		switch f.num {
		case 1: // sample_type
			vt, err := valueType(f)
			if err != nil {
				return nil, err
			}
			if len(refs.types) == maxSampleTypes {
				return nil, fmt.Errorf("more than %d sample types", maxSampleTypes)
			}
			refs.types = append(refs.types, vt)
		case 2: // sample: summed in the second pass, once every sample type is known
			if f.typ != wireBytes {
				return nil, errNotProto
			}
			s.Samples++
		case 3: // mapping
			if !refs.mapped {
				refs.mapped = true
				if err := mappingRefs(f, &refs); err != nil {
					return nil, err
				}
			}
		case 6: // string_table
			if f.typ != wireBytes {
				return nil, errNotProto
			}
			nStrings++
		case 9, 10, 12, 14: // time_nanos, duration_nanos, period, default_sample_type
			if f.typ != wireVarint {
				return nil, errNotProto
			}
			v := int64(f.varint)
			switch f.num {
			case 9:
				s.TimeNanos = v
			case 10:
				s.DurationNanos = v
			case 12:
				s.Period = v
			case 14:
				refs.dflt = v
			}
		case 11: // period_type
			vt, err := valueType(f)
			if err != nil {
				return nil, err
			}
			refs.period = vt
		}
	}
	if len(refs.types) == 0 && s.Samples > 0 {
		return nil, errors.New("samples without sample types")
	}
	if err := secondPass(data, nStrings, &refs, s); err != nil {
		return nil, err
	}
	return s, nil
}

// valueType reads a ValueType message: its type and unit as string indices.
func valueType(f field) ([2]int64, error) {
	var vt [2]int64
	if f.typ != wireBytes {
		return vt, errNotProto
	}
	for b := f.data; len(b) > 0; {
		sf, rest, err := nextField(b)
		if err != nil {
			return vt, err
		}
		b = rest
		if (sf.num == 1 || sf.num == 2) && sf.typ == wireVarint {
			vt[sf.num-1] = int64(sf.varint)
		}
	}
	return vt, nil
}

// mappingRefs reads the file name and build ID of a Mapping message.
func mappingRefs(f field, refs *summaryRefs) error {
	if f.typ != wireBytes {
		return errNotProto
	}
	for b := f.data; len(b) > 0; {
		sf, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case sf.num == 5 && sf.typ == wireVarint:
			refs.binary = int64(sf.varint)
		case sf.num == 6 && sf.typ == wireVarint:
			refs.buildID = int64(sf.varint)
		}
	}
	return nil
}

// addSample adds a Sample message's values to totals; their number must be the number of
// sample types.
func addSample(f field, totals []int64) error {
	n := 0
	for b := f.data; len(b) > 0; {
		sf, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if sf.num != 2 {
			continue
		}
		if sf.typ == wireVarint {
			if n < len(totals) {
				totals[n] = addSat(totals[n], int64(sf.varint))
			}
			n++
			continue
		}
		if sf.typ != wireBytes {
			return errNotProto
		}
		for p := sf.data; len(p) > 0; {
			v, r, err := varint(p)
			if err != nil {
				return err
			}
			p = r
			if n < len(totals) {
				totals[n] = addSat(totals[n], int64(v))
			}
			n++
		}
	}
	if n != len(totals) {
		return fmt.Errorf("a sample has %d values for %d sample types", n, len(totals))
	}
	return nil
}

// addSat adds, saturating at the int64 range.
func addSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// secondPass sums the samples' values and looks up the strings the first pass referred to.
func secondPass(data []byte, n int64, refs *summaryRefs, s *Summary) error {
	if n == 0 {
		return errors.New("no string table")
	}
	want := map[int64]string{0: ""}
	for _, vt := range refs.types {
		want[vt[0]], want[vt[1]] = "", ""
	}
	for _, i := range []int64{refs.period[0], refs.period[1], refs.dflt, refs.binary, refs.buildID} {
		want[i] = ""
	}
	for i := range want {
		if i < 0 || i >= n {
			return fmt.Errorf("string index %d out of range (%d strings)", i, n)
		}
	}
	s.Totals = make([]int64, len(refs.types))
	idx := int64(0)
	for b := data; len(b) > 0; {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch f.num {
		case 2:
			if err := addSample(f, s.Totals); err != nil {
				return err
			}
		case 6:
			if _, ok := want[idx]; ok {
				want[idx] = string(f.data)
			}
			idx++
		}
	}
	if want[0] != "" {
		return errors.New("the string table does not start with the empty string")
	}
	for _, vt := range refs.types {
		s.SampleTypes = append(s.SampleTypes, ValueType{want[vt[0]], want[vt[1]]})
	}
	s.PeriodType = ValueType{want[refs.period[0]], want[refs.period[1]]}
	s.DefaultSampleType = want[refs.dflt]
	s.MainBinary, s.BuildID = want[refs.binary], want[refs.buildID]
	return nil
}

// SummaryOf summarizes a parsed profile (a legacy text profile, or one already parsed).
func SummaryOf(p *profile.Profile) *Summary {
	s := &Summary{
		Period: p.Period, DefaultSampleType: p.DefaultSampleType, Samples: len(p.Sample),
		TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos,
	}
	for _, st := range p.SampleType {
		if st == nil {
			s.SampleTypes = append(s.SampleTypes, ValueType{})
			continue
		}
		s.SampleTypes = append(s.SampleTypes, ValueType{st.Type, st.Unit})
	}
	if p.PeriodType != nil {
		s.PeriodType = ValueType{p.PeriodType.Type, p.PeriodType.Unit}
	}
	s.Totals = make([]int64, len(s.SampleTypes))
	for _, smp := range p.Sample {
		for i, v := range smp.Value {
			if i < len(s.Totals) {
				s.Totals[i] = addSat(s.Totals[i], v)
			}
		}
	}
	if len(p.Mapping) > 0 && p.Mapping[0] != nil {
		s.MainBinary, s.BuildID = p.Mapping[0].File, p.Mapping[0].BuildID
	}
	return s
}
