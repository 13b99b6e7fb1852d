package pprofio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/infile"
)

// Limits bound what reading one profile may cost.
type Limits struct {
	// Compressed bounds the bytes read: the file or body as stored, gzipped or not.
	Compressed int64
	// Decompressed bounds the encoded profile after gunzip (for a raw profile, its size).
	Decompressed int64
	// Memory bounds what parsing may allocate, as EstimateProto and the legacy formats'
	// ratio estimate it before parsing.
	Memory int64
}

// Default are the limits memdoctor reads every profile with: a profile costs at most 32 MiB
// of buffer and 128 MiB of parsing. They come from measurements (bench/hostile): a heap
// profile shaped like a big service's (32-frame stacks, the bytes label) at the memory
// limit is 7.4 MiB raw and costs memdoctor diff 208 MiB of RSS, report --html 251 MiB; at
// 256 MiB it cost 430 and 532. The largest real profile we have (a merged Loki heap profile:
// 757 KiB gzipped, 2.6 MiB raw, 25 MiB allocated to parse, estimated 33 MiB) is within them
// with room: 12 times below the size limits, 3.8 times below the memory limit
// (TestDefaultHeadroom).
var Default = Limits{
	Compressed:   32 << 20,
	Decompressed: 32 << 20,
	Memory:       128 << 20,
}

// ErrTooLarge is wrapped by the errors of inputs over a limit. Its text ends them: what the
// user may do.
var ErrTooLarge = errors.New("memdoctor refuses larger profiles to bound its own memory (go tool pprof reads them)")

// ErrNotProfile is wrapped by the errors of inputs that are not a readable profile:
// corrupt or truncated gzip, gzipped twice, neither protobuf nor a legacy format, invalid.
var ErrNotProfile = errors.New("not a pprof profile")

// ReadFile reads and parses the profile at path, within l. Errors name it by path.
func (l Limits) ReadFile(path string) (*profile.Profile, error) {
	return l.ReadFileAs(path, path)
}

// ReadFileAs is ReadFile with errors naming the profile name. path must be a regular file
// (package infile): a named pipe or a device, such as a link to /dev/zero planted in a
// session, is refused before anything is read.
func (l Limits) ReadFileAs(name, path string) (*profile.Profile, error) {
	data, err := l.readFileData(name, path, false)
	if err != nil {
		return nil, err
	}
	return l.ParseData(name, data)
}

// ReadFileData reads the profile at path within l's size limits and returns its decoded
// bytes: decompressed when it was gzipped, as they are otherwise.
func (l Limits) ReadFileData(path string) ([]byte, error) {
	return l.readFileData(path, path, false)
}

// ReadFileDataAs is ReadFileData with errors naming the profile name.
func (l Limits) ReadFileDataAs(name, path string) ([]byte, error) {
	return l.readFileData(name, path, false)
}

// ReadArgDataAs is ReadFileDataAs for a path the user named on the command line: a pipe is
// read too (memdoctor diff <(curl -s .../heap) new.pb.gz), within l.
func (l Limits) ReadArgDataAs(name, path string) ([]byte, error) {
	return l.readFileData(name, path, true)
}

func (l Limits) readFileData(name, path string, pipes bool) ([]byte, error) {
	open := infile.Open
	if pipes {
		open = infile.OpenArg
	}
	f, err := open(path, 0) // the size is checked below, with the limits' own message
	if err != nil {
		if name != path {
			return nil, fmt.Errorf("%s: %w", name, unwrapPathError(err))
		}
		return nil, err
	}
	defer f.Close()
	size := f.Size() // -1 for a pipe
	var trailer []byte
	if size >= 18 { // the smallest gzip member: a 10-byte header, an empty block, an 8-byte trailer
		trailer = make([]byte, 4)
		if _, err := f.ReadAt(trailer, size-4); err != nil {
			trailer = nil
		}
	}
	return l.decode(name, f, size, trailer)
}

// unwrapPathError drops the *fs.PathError wrapper whose path the caller names otherwise.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Read reads and parses a profile from r, within l. name names it in errors.
func (l Limits) Read(name string, r io.Reader) (*profile.Profile, error) {
	data, err := l.decode(name, r, -1, nil)
	if err != nil {
		return nil, err
	}
	return l.ParseData(name, data)
}

// Parse parses a profile held in memory as it was stored or served (gzipped or not), within l.
func (l Limits) Parse(name string, raw []byte) (*profile.Profile, error) {
	data, err := l.Decode(name, raw)
	if err != nil {
		return nil, err
	}
	return l.ParseData(name, data)
}

// Decode returns the decoded bytes of a profile held in memory: gunzipped within
// l.Decompressed when raw is gzipped, raw itself otherwise.
func (l Limits) Decode(name string, raw []byte) ([]byte, error) {
	var trailer []byte
	if len(raw) >= 18 {
		trailer = raw[len(raw)-4:]
	}
	if !isGzip(raw) {
		if err := l.checkRaw(name, int64(len(raw))); err != nil {
			return nil, err
		}
		return raw, nil
	}
	return l.decode(name, bytes.NewReader(raw), int64(len(raw)), trailer)
}

// checkRaw checks the size of a profile that is not gzipped.
func (l Limits) checkRaw(name string, n int64) error {
	if limit := min(l.Compressed, l.Decompressed); n > limit {
		return fmt.Errorf("%s: more than %s: %w", name, formatBytes(limit), ErrTooLarge)
	}
	return nil
}

// decode reads r (size bytes, -1 if unknown; trailer: its last 4 bytes, if known) within
// the size limits and gunzips it when it is gzipped.
func (l Limits) decode(name string, r io.Reader, size int64, trailer []byte) ([]byte, error) {
	if size > l.Compressed {
		return nil, fmt.Errorf("%s: %s, more than %s: %w", name, formatBytes(size), formatBytes(l.Compressed), ErrTooLarge)
	}
	br := bufio.NewReader(&limitReader{r: r, left: l.Compressed})
	head, _ := br.Peek(2)
	if !isGzip(head) {
		limit := min(l.Compressed, l.Decompressed)
		data, err := readAll(br, limit, size)
		switch {
		case errors.Is(err, errLimit) || errors.Is(err, errOverCompressed):
			return nil, fmt.Errorf("%s: more than %s: %w", name, formatBytes(limit), ErrTooLarge)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return data, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: bad gzip header: %w", name, ErrNotProfile, err)
	}
	hint := int64(-1)
	if len(trailer) == 4 {
		// The last member's size mod 2^32, unless the file is cut short or forged: a hint.
		hint = min(int64(binary.LittleEndian.Uint32(trailer)), maxRatio*size)
		if hint > l.Decompressed {
			// Most likely a bomb: confirm it without keeping what it decompresses to.
			n, err := io.Copy(io.Discard, io.LimitReader(zr, l.Decompressed+1))
			if n > l.Decompressed {
				return nil, fmt.Errorf("%s: decompresses to more than %s: %w", name, formatBytes(l.Decompressed), ErrTooLarge)
			}
			return nil, l.gunzipErr(name, err, n)
		}
	}
	data, err := readAll(zr, l.Decompressed, hint)
	if errors.Is(err, errLimit) {
		return nil, fmt.Errorf("%s: decompresses to more than %s: %w", name, formatBytes(l.Decompressed), ErrTooLarge)
	}
	if err != nil {
		return nil, l.gunzipErr(name, err, int64(len(data)))
	}
	if isGzip(data) {
		return nil, twiceErr(name)
	}
	return data, nil
}

// gunzipErr describes a gzip stream that failed after n bytes decompressed (err nil: it
// ended early, and its trailer lied about its size).
func (l Limits) gunzipErr(name string, err error, n int64) error {
	switch {
	case errors.Is(err, errOverCompressed):
		return fmt.Errorf("%s: more than %s compressed: %w", name, formatBytes(l.Compressed), ErrTooLarge)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: %w: truncated gzip (it ends after %d bytes decompressed): the file was cut short", name, ErrNotProfile, n)
	case err == nil:
		err = gzip.ErrChecksum
	}
	return fmt.Errorf("%s: %w: corrupt gzip: %w", name, ErrNotProfile, err)
}

// maxRatio is deflate's largest compression ratio (a 258-byte match in about 2 bits).
const maxRatio = 1032

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// ParseData parses data, a profile's decoded bytes (not gzipped), as profile.ParseData
// does, after checking that parsing it stays within l.Memory.
func (l Limits) ParseData(name string, data []byte) (*profile.Profile, error) {
	if isGzip(data) {
		return nil, twiceErr(name)
	}
	if est := Estimate(data); est > l.Memory {
		return nil, fmt.Errorf("%s: parsing it would take about %s, more than %s: %w", name, formatBytes(est), formatBytes(l.Memory), ErrTooLarge)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrNotProfile, err)
	}
	return p, nil
}

// ParseProto parses data as a protobuf profile only (never a legacy format), as
// profile.ParseUncompressed does, and checks it, after checking that parsing it stays within
// l.Memory.
func (l Limits) ParseProto(name string, data []byte) (*profile.Profile, error) {
	if isGzip(data) {
		return nil, twiceErr(name)
	}
	est, err := EstimateProto(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrNotProfile, err)
	}
	if est > l.Memory {
		return nil, fmt.Errorf("%s: parsing it would take about %s, more than %s: %w", name, formatBytes(est), formatBytes(l.Memory), ErrTooLarge)
	}
	p, err := profile.ParseUncompressed(data)
	if err == nil {
		err = p.CheckValid()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrNotProfile, err)
	}
	return p, nil
}

func twiceErr(name string) error {
	return fmt.Errorf("%s: %w: it is gzipped twice (pprof gzips once): gunzip it once and retry", name, ErrNotProfile)
}

// errLimit: a read reached its limit.
var errLimit = errors.New("limit reached")

// readAll reads r to its end into one buffer sized by hint (-1: unknown), and fails with
// errLimit past limit bytes. A right hint costs one allocation of the right size; a wrong or
// missing one, growth by doubling up to the limit (twice the limit allocated at most).
func readAll(r io.Reader, limit, hint int64) ([]byte, error) {
	size := int64(64 << 10)
	if hint >= 0 {
		size = hint
	}
	buf := make([]byte, 0, max(min(size, limit), 512))
	for {
		if len(buf) == cap(buf) {
			// Full: look for one more byte before growing.
			var one [1]byte
			n, err := r.Read(one[:])
			if n == 0 {
				if err == io.EOF {
					return buf, nil
				}
				if err != nil {
					return buf, err
				}
				continue
			}
			if int64(len(buf)) >= limit {
				return nil, errLimit
			}
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit))
			copy(grown, buf)
			buf = append(grown, one[0])
			if err == io.EOF {
				return buf, nil
			}
			if err != nil {
				return buf, err
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// errOverCompressed: the input goes on past the compressed limit.
var errOverCompressed = errors.New("over the compressed limit")

// limitReader reads at most left bytes; past them it fails with errOverCompressed if the
// input goes on, and reports io.EOF if it ends there.
type limitReader struct {
	r    io.Reader
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if l.left <= 0 {
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, errOverCompressed
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.3g GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3g MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.3g KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
