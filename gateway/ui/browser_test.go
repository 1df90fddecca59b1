package ui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kernelgate/kernelgate/internal/llmtest"
)

// browser is a headless Chromium tab.
type browser struct {
	ctx  context.Context
	base string // the gateway's URL
	dir  string // where screenshots go
}

// chromium is Debian's package (scripts/setup-chromium.sh installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	required(t, "no chromium on PATH: run scripts/setup-chromium.sh (make setup does)")
	return ""
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 860), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	// Screenshots are the run's artifacts: in $KERNELGATE_SCREENSHOTS, else in
	// a temp dir of the test's that CI (CI=true) and a failure keep.
	dir := os.Getenv("KERNELGATE_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("kernelgate-ui-%d", time.Now().UnixNano()))
		t.Cleanup(func() {
			if !t.Failed() && os.Getenv("CI") != "true" {
				os.RemoveAll(dir)
			}
		})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &browser{ctx: ctx, base: base, dir: dir}
}

// tab opens a second tab of the same browser (the overview keeps polling
// there while the first tab follows a batch or a search).
func (b *browser) tab(t *testing.T) *browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return &browser{ctx: ctx, base: b.base, dir: b.dir}
}

// open loads a page and waits for its body.
func (b *browser) open(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
}

// eval runs a JavaScript expression in the page and returns its value.
func eval[T any](b *browser, js string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js))
}

// do runs JavaScript for its effect.
func (b *browser) do(t *testing.T, js string) {
	t.Helper()
	if _, err := eval[any](b, js+"; null"); err != nil {
		t.Fatalf("running %q: %v", js, err)
	}
}

// text is the text of the first element sel matches ("" when none, or
// when the page is between two documents: a waitFor polls again).
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := eval[string](b, fmt.Sprintf(`(document.querySelector(%q)||{}).textContent||""`, sel))
	if err != nil {
		t.Logf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// count is how many elements sel matches (-1 when the page cannot say).
func (b *browser) count(t *testing.T, sel string) int {
	t.Helper()
	n, err := eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
	if err != nil {
		t.Logf("counting %s: %v", sel, err)
		return -1
	}
	return n
}

// waitFor polls cond every 250 ms until it returns "" (done) or the time
// is up; the last non-empty answer says what was still missing.
func (b *browser) waitFor(t *testing.T, d time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		miss := cond()
		if miss == "" {
			return
		}
		if time.Now().After(deadline) {
			b.shot(t, "timeout")
			t.Fatalf("%s: not within %s: %s", what, d, miss)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// shot saves the viewport as DIR/name.png.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("screenshot %s", path)
}

// scriptedLLM proposes a kernel that calls tl.foo fails times (the same
// error each time: the skill memory makes a rule of it), then the honest
// kernel; a rule extraction gets rule, a duplicate check "NONE".
func scriptedLLM(t *testing.T, broken, honest, rule string, fails int) *llmtest.Server {
	fenced := func(code string) string { return "Here it is.\n```python\n" + code + "\n```\n" }
	anyMessage := func(substr string) func(llmtest.Request) bool {
		return func(r llmtest.Request) bool {
			for _, m := range r.Messages {
				if strings.Contains(m.Content, substr) {
					return true
				}
			}
			return false
		}
	}
	return llmtest.New(t,
		llmtest.Reply(rule).When(anyMessage("Error signature:")),
		llmtest.Reply("NONE").When(anyMessage("uplicate")),
		// Slow proposals: the search's repeats are answered from the result
		// cache at once, and the page must be seen growing step by step.
		llmtest.Reply(fenced(broken)).Repeat(fails).After(500*time.Millisecond),
		llmtest.Reply(fenced(honest)).After(500*time.Millisecond),
	)
}
