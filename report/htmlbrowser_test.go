package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium (apt-get install chromium).
const chromiumPath = "/usr/bin/chromium"

// browser is a headless Chromium driven over the DevTools protocol. It records every console
// error, uncaught exception and error log entry (a CSP violation, a failed load) of its pages.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
	synced string // the last sync mark seen (see sync)
	nsync  int
}

// syncMark starts the console messages sync writes.
const syncMark = "memdoctor-test-sync-"

// sync waits until every console message the page wrote so far has been seen: it writes a
// mark to the console and waits for it to come back, after the messages before it.
func (b *browser) sync(ctx context.Context) error {
	b.nsync++
	mark := syncMark + strconv.Itoa(b.nsync)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`console.debug("`+mark+`"), true`)); err != nil {
		return err
	}
	for {
		b.mu.Lock()
		done := b.synced == mark
		b.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (b *browser) hasErrors() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.errors) > 0
}

// newBrowser starts headless Chromium with a fresh profile, or skips the test when Chromium is
// not installed.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("browser test skipped: %s not found (install Debian's chromium: apt-get install -y chromium)", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	b := &browser{ctx: ctx}
	// The first call starts the browser; it must not carry a timeout (that would stop it).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleDebug && strings.HasPrefix(m.Text, syncMark) {
				b.mu.Lock()
				b.synced = m.Text
				b.mu.Unlock()
				continue
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.addError("%s (%s:%d)", m.String(), m.URL, m.Line)
			}
		}
	}()
	return b
}

func (b *browser) addError(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, fmt.Sprintf(format, args...))
}

func (b *browser) takeErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.errors
	b.errors = nil
	return e
}

// pageState is what a loaded report shows, read back from the page.
type pageState struct {
	ReadyMS float64       `json:"readyMs"`
	Charts  []canvasState `json:"charts"`
	Flames  []canvasState `json:"flames"`
	Cards   int           `json:"cards"`
	// Plots counts the chart figures that should hold a canvas (those not empty).
	Plots     int    `json:"plots"`
	Zone      string `json:"zone"`
	DarkBg    string `json:"bg"`
	Snapshots int    `json:"snapshots"`
}

// canvasState counts a canvas's drawn pixels: in a chart, the opaque pixels inside the plot
// area (grid lines are faint, so they do not count); in a flame graph, every painted pixel.
type canvasState struct {
	ID     string `json:"id"`
	Width  int    `json:"w"`
	Height int    `json:"h"`
	Drawn  int    `json:"drawn"`
}

// readState is run in the page once it says it is ready.
const readState = `(() => {
  const drawn = (c, box, minAlpha) => {
    const g = c.getContext("2d");
    const x = box ? Math.round(box.left) : 0, y = box ? Math.round(box.top) : 0;
    const w = box ? Math.round(box.width) : c.width, h = box ? Math.round(box.height) : c.height;
    if (w <= 0 || h <= 0) return 0;
    const px = g.getImageData(x, y, w, h).data;
    let n = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] >= minAlpha) n++;
    return n;
  };
  const charts = [...document.querySelectorAll("figure.chart .plot")].map(el => {
    const c = el.querySelector("canvas");
    const fig = el.closest("figure");
    if (!c) return {id: fig.dataset.chart, w: 0, h: 0, drawn: 0};
    const box = JSON.parse(el.dataset.plotBox || "null");
    return {id: fig.dataset.chart, w: c.width, h: c.height, drawn: drawn(c, box, 200)};
  });
  const flames = [...document.querySelectorAll(".flame canvas")].map(c => ({
    id: c.closest(".flame").dataset.finding, w: c.width, h: c.height, drawn: drawn(c, null, 1)}));
  return {
    readyMs: window.memdoctorReady ? window.memdoctorReady.ms : -1,
    charts, flames,
    cards: document.querySelectorAll("article.finding").length,
    plots: document.querySelectorAll("figure.chart .plot").length,
    zone: document.getElementById("tz").textContent,
    bg: getComputedStyle(document.documentElement).getPropertyValue("--bg").trim(),
    snapshots: document.querySelectorAll("#picker select[name=a] option").length,
  };
})()`

// load opens a report file, waits until its script says every chart is drawn, reads the page
// back and saves a full-page screenshot to png (when not "").
func (b *browser) load(t *testing.T, file, png string, dark bool) pageState {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	st := b.loadURL(t, "file://"+abs, png, dark)
	// Again without the overlays (finding spans, limits, GC ticks), to count the pixels of the
	// series alone: a chart whose series drew nothing must not pass on its decorations.
	series := b.loadURL(t, "file://"+abs+"?series-only", "", dark)
	st.Charts = series.Charts
	return st
}

func (b *browser) loadURL(t *testing.T, url, png string, dark bool) pageState {
	t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	fail := func(what string, err error) {
		t.Helper()
		t.Fatalf("%s %s in chromium: %v (browser errors: %v)", what, url, err, b.takeErrors())
	}
	features := []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features}); err != nil {
		fail("emulate colour scheme for", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		fail("load", err)
	}
	// Wait for the page to say it drew everything, or to fail trying.
	for ready := false; !ready; {
		r, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.getAttribute("data-ready") === "true"`))
		switch {
		case err != nil:
			fail("wait for the charts of", err)
		case !r && b.hasErrors():
			fail("draw", errors.New("the page failed before it was ready"))
		}
		ready = r
		if !ready {
			time.Sleep(20 * time.Millisecond)
		}
	}
	st, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](readState))
	if err != nil {
		fail("read back", err)
	}
	if err := b.sync(ctx); err != nil {
		fail("read the console of", err)
	}
	if png != "" {
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			fail("screenshot", err)
		}
		if err := os.WriteFile(png, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// checkPage fails on any console error, and on any chart or flame graph without drawn
// content, and checks the finding cards.
func checkPage(t *testing.T, b *browser, st pageState, wantCards int) {
	t.Helper()
	for _, e := range b.takeErrors() {
		t.Errorf("browser: %s", e)
	}
	if st.ReadyMS < 0 {
		t.Errorf("the page never said it was ready")
	}
	if len(st.Charts) == 0 || len(st.Charts) != st.Plots {
		t.Errorf("%d chart canvases for %d charts", len(st.Charts), st.Plots)
	}
	for _, c := range st.Charts {
		// The series themselves (overlays off): at least a thin line across the plot.
		if c.Drawn < 500 {
			b, _ := json.Marshal(c)
			t.Errorf("chart %s looks blank: %s", c.ID, b)
		}
	}
	for _, f := range st.Flames {
		if f.Drawn < 1000 {
			t.Errorf("flame graph of finding #%s looks blank: %d pixels drawn of %dx%d", f.ID, f.Drawn, f.Width, f.Height)
		}
	}
	if st.Cards != wantCards {
		t.Errorf("%d finding cards, want %d", st.Cards, wantCards)
	}
	if !strings.Contains(st.Zone, "UTC") {
		t.Errorf("the page does not state its time zone: %q", st.Zone)
	}
}
