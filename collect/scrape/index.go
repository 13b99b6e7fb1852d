package scrape

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Index is what the pprof index page (/debug/pprof/) lists: each profile's count, by profile
// name. The runtime computes them without stopping the world: "goroutine" is
// runtime.NumGoroutine(), "goroutineleak" (Go 1.27, or Go 1.26 built with
// GOEXPERIMENT=goroutineleakprofile) the leaked goroutines found by the last leak-detection
// cycle (reading it starts none), "heap" and "allocs" the heap profile's records,
// "threadcreate" the threads created, "block" and "mutex" their records. Profiles the page
// links without a count of their own (cmdline, profile, symbol, trace) are listed with 0.
type Index map[string]int

// Limits of ParseIndex: a page listing more profiles, or longer names, is not one a Go
// program serves (the runtime registers 8 profiles; programs add a few).
const (
	maxIndexEntries = 256
	maxIndexName    = 128
	maxIndexTag     = 512 // bytes kept of one HTML tag
	maxIndexText    = 256 // bytes of one text run; longer runs are not a count or a name
)

// ParseIndex reads a pprof index page and returns the count of each profile it lists. It
// streams: memory stays bounded whatever the page's size. It reads the table of every Go
// release's index (a row holds a <td> whose text is the count, then an <a> whose text is the
// profile's name) and ignores the rest of the page. It fails when the page lists no
// goroutine count, which every Go program's index has.
func ParseIndex(r io.Reader) (Index, error) {
	p := indexParser{out: Index{}, br: bufio.NewReaderSize(r, 4096)}
	if err := p.run(); err != nil {
		return nil, err
	}
	if _, ok := p.out["goroutine"]; !ok {
		return nil, fmt.Errorf("%w: the page lists no goroutine count (%d profile counts found)", ErrNotPprof, len(p.out))
	}
	return p.out, nil
}

// indexParser is a small HTML tokenizer that knows only what the index table needs.
type indexParser struct {
	br  *bufio.Reader
	out Index

	text     []byte // the current text run
	textLong bool   // the run passed maxIndexText
	tag      []byte
	afterTD  bool // the text now read follows a <td>: it may be a count
	count    int
	hasCount bool // a count waits for its profile's name
	inAnchor bool
	name     []byte
	nameBad  bool
}

func (p *indexParser) run() error {
	for {
		c, err := p.br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if c != '<' {
			p.addText(c)
			continue
		}
		p.endText()
		if err := p.readTag(); err != nil {
			return err
		}
	}
}

func (p *indexParser) addText(c byte) {
	if len(p.text) < maxIndexText {
		p.text = append(p.text, c)
	} else {
		p.textLong = true
	}
}

// endText handles the text run before a tag.
func (p *indexParser) endText() {
	text, long := p.text, p.textLong
	p.text, p.textLong = p.text[:0], false
	switch {
	case p.inAnchor:
		if long || len(p.name)+len(text) > maxIndexName*2 { // entities may shrink it: checked after unescaping
			p.nameBad = true
			return
		}
		p.name = append(p.name, text...)
	case p.afterTD && !long:
		t := bytes.TrimSpace(text)
		if len(t) == 0 {
			return // "<td> <a ...>": wait for the next text
		}
		p.afterTD = false
		if n, ok := parseCount(t); ok {
			p.count, p.hasCount = n, true
		}
	}
}

// parseCount accepts the decimal counts the runtime prints.
func parseCount(s []byte) (int, bool) {
	if len(s) == 0 || len(s) > maxCountDigits {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// maxCountDigits is the most digits an int holds whatever their value.
const maxCountDigits = 18 - 9*(64-strconv.IntSize)/32

// readTag reads a tag after its '<' and acts on it.
func (p *indexParser) readTag() error {
	p.tag = p.tag[:0]
	for {
		c, err := p.br.ReadByte()
		if err == io.EOF {
			return nil // a page cut in a tag: keep what was read
		}
		if err != nil {
			return err
		}
		if c == '>' {
			break
		}
		if len(p.tag) < maxIndexTag { // the name comes first: the attributes past this are not needed
			p.tag = append(p.tag, c)
		}
	}
	switch tagName(p.tag) {
	case "td":
		if !p.inAnchor {
			p.afterTD = true
		}
	case "tr", "/tr", "table", "/table":
		p.reset()
	case "a":
		if p.hasCount && !p.inAnchor {
			p.inAnchor, p.name, p.nameBad = true, p.name[:0], false
		}
	case "/a":
		if p.inAnchor {
			p.add()
			p.reset()
		}
	}
	return nil
}

func (p *indexParser) reset() {
	p.afterTD, p.hasCount, p.inAnchor, p.nameBad = false, false, false, false
	p.name = p.name[:0]
}

// tagName is the name of a tag that matters to the index table ("td", "/a"), "" for any
// other tag.
func tagName(tag []byte) string {
	var low [7]byte
	n := 0
	for i, c := range tag {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c < 'a' || c > 'z' {
			if i > 0 || c != '/' {
				break
			}
		}
		if n == len(low) {
			return ""
		}
		low[n] = c
		n++
	}
	return tableTags[string(low[:n])] // the lookup does not allocate
}

var tableTags = map[string]string{"td": "td", "tr": "tr", "/tr": "/tr", "table": "table", "/table": "/table", "a": "a", "/a": "/a"}

// add records the profile whose name was just read, unless the name is not one a Go program
// could have registered, the profile is listed already, or the page lists too many.
func (p *indexParser) add() {
	if p.nameBad || len(p.out) >= maxIndexEntries {
		return
	}
	name := strings.TrimSpace(html.UnescapeString(string(p.name)))
	if !validIndexName(name) {
		return
	}
	if _, dup := p.out[name]; !dup {
		p.out[name] = p.count
	}
}

func validIndexName(name string) bool {
	if name == "" || len(name) > maxIndexName || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '<' || r == '>' {
			return false
		}
	}
	return true
}

// indexMaxBody bounds the index page: a few KiB in practice.
const indexMaxBody = 1 << 20

// Index reads the pprof index page and returns the count of each profile it lists (see
// [Index]). It is made to be polled every second: it makes one attempt, never retried
// whatever the client's retry setting, and reads at most 1 MiB; bound it with ctx. It costs
// the target one pass over its registered profiles' counts: no stop-the-world, no GC.
func (c *Client) Index(ctx context.Context) (Index, error) {
	var ix Index
	_, _, err := c.try(ctx, c.base, "", 0, func(body io.Reader, _ *http.Response) error {
		hr := &headReader{r: io.LimitReader(body, indexMaxBody), head: make([]byte, 0, 2*snippetMax)}
		var err error
		ix, err = ParseIndex(hr)
		if errors.Is(err, ErrNotPprof) {
			return fmt.Errorf("%w; body: %s", err, snippet(hr.head))
		}
		return err
	})
	return ix, err
}
