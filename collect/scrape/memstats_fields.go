package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// maxPauseRing is the length of runtime.MemStats.PauseNs and PauseEnd.
const maxPauseRing = 256

// setField stores one printed field; unknown names are ignored.
func (ms *MemStats) setField(name string, v []byte) error {
	if p := ms.uint64Field(name); p != nil {
		return parseUint(v, 64, p)
	}
	var err error
	switch name {
	case "Stack":
		err = parsePair(v, &ms.StackInuse, &ms.StackSys)
	case "MSpan":
		err = parsePair(v, &ms.MSpanInuse, &ms.MSpanSys)
	case "MCache":
		err = parsePair(v, &ms.MCacheInuse, &ms.MCacheSys)
	case "PauseNs":
		ms.PauseNs, err = parseRing(v)
	case "PauseEnd":
		ms.PauseEnd, err = parseRing(v)
	case "NumGC":
		err = parseUint32(v, &ms.NumGC)
	case "NumForcedGC":
		err = parseUint32(v, &ms.NumForcedGC)
	case "GCCPUFraction":
		ms.GCCPUFraction, err = strconv.ParseFloat(string(v), 64)
		if err == nil && (math.IsNaN(ms.GCCPUFraction) || math.IsInf(ms.GCCPUFraction, 0)) {
			err = errors.New("not a finite number")
		}
	case "DebugGC":
		ms.DebugGC, err = strconv.ParseBool(string(v))
	}
	return err
}

// uint64Field returns the plain uint64 field called name, or nil.
func (ms *MemStats) uint64Field(name string) *uint64 {
	switch name {
	case "Alloc":
		return &ms.Alloc
	case "TotalAlloc":
		return &ms.TotalAlloc
	case "Sys":
		return &ms.Sys
	case "Lookups":
		return &ms.Lookups
	case "Mallocs":
		return &ms.Mallocs
	case "Frees":
		return &ms.Frees
	case "HeapAlloc":
		return &ms.HeapAlloc
	case "HeapSys":
		return &ms.HeapSys
	case "HeapIdle":
		return &ms.HeapIdle
	case "HeapInuse":
		return &ms.HeapInuse
	case "HeapReleased":
		return &ms.HeapReleased
	case "HeapObjects":
		return &ms.HeapObjects
	case "BuckHashSys":
		return &ms.BuckHashSys
	case "GCSys":
		return &ms.GCSys
	case "OtherSys":
		return &ms.OtherSys
	case "NextGC":
		return &ms.NextGC
	case "LastGC":
		return &ms.LastGC
	case "MaxRSS":
		return &ms.MaxRSS
	}
	return nil
}

func parseUint(v []byte, bits int, dst *uint64) error {
	n, err := strconv.ParseUint(string(v), 10, bits)
	if err != nil {
		return unwrapNum(err)
	}
	*dst = n
	return nil
}

func parseUint32(v []byte, dst *uint32) error {
	var n uint64
	if err := parseUint(v, 32, &n); err != nil {
		return err
	}
	*dst = uint32(n)
	return nil
}

// parsePair parses "inuse / sys".
func parsePair(v []byte, inuse, sys *uint64) error {
	a, b, ok := bytes.Cut(v, []byte(" / "))
	if !ok {
		return errors.New(`want "inuse / sys"`)
	}
	if err := parseUint(bytes.TrimSpace(a), 64, inuse); err != nil {
		return err
	}
	return parseUint(bytes.TrimSpace(b), 64, sys)
}

// parseRing parses "[n n n ...]", at most 256 numbers.
func parseRing(v []byte) ([]uint64, error) {
	inner, ok := bytes.CutPrefix(v, []byte("["))
	if ok {
		inner, ok = bytes.CutSuffix(inner, []byte("]"))
	}
	if !ok {
		return nil, errors.New(`want "[n n ...]"`)
	}
	out := make([]uint64, 0, maxPauseRing)
	for {
		inner = bytes.TrimLeft(inner, " \t")
		if len(inner) == 0 {
			return out, nil
		}
		if len(out) == maxPauseRing {
			return nil, fmt.Errorf("more than %d numbers", maxPauseRing)
		}
		end := bytes.IndexAny(inner, " \t")
		if end < 0 {
			end = len(inner)
		}
		var n uint64
		if err := parseUint(inner[:end], 64, &n); err != nil {
			return nil, err
		}
		out = append(out, n)
		inner = inner[end:]
	}
}

// unwrapNum drops strconv's repetition of the input.
func unwrapNum(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}
