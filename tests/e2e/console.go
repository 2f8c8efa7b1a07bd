package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ConsoleTimeout bounds each wait on the console: a page loading, a view
// showing what the test wrote. The browser and a server built with -race
// share two loaded cores with other tests (and, in a check of the suite,
// with a second run of it): a bound for a hang, not for speed.
const ConsoleTimeout = 2 * time.Minute

// consoleBrowser is the one headless Chromium the console tests share;
// each test opens its own tab in a browser context of its own (its own
// storage). CloseConsoleBrowser closes it after the tests.
var consoleBrowser struct {
	once   sync.Once
	ctx    context.Context // the browser's context, for new tabs
	cancel context.CancelFunc
	err    error
}

// CloseConsoleBrowser stops the shared browser, if it was started, and
// waits until it has exited; the TestMain of a package of console tests
// calls it after them.
func CloseConsoleBrowser() {
	if consoleBrowser.cancel != nil {
		consoleBrowser.cancel()
	}
}

// sharedBrowser starts the shared browser on first use. chromedp gives it
// a fresh user data directory and, on close, kills what is left of it and
// removes the directory. The flags keep it off the network beyond the
// tests' own servers: this machine's closed network makes it hang
// otherwise.
func sharedBrowser(tb testing.TB) context.Context {
	tb.Helper()
	RequireChromium(tb)
	consoleBrowser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(ChromiumPath),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-sync", true),
			chromedp.WindowSize(1280, 800),
		)
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		consoleBrowser.ctx = ctx
		consoleBrowser.cancel = func() {
			cancel()
			cancelAlloc()
		}
		// Starting the browser is running nothing on its first tab, with
		// the browser's own context: a shorter one would end the browser
		// when it ends.
		consoleBrowser.err = chromedp.Do(ctx)
	})
	if consoleBrowser.err != nil {
		tb.Fatalf("starting %s: %v", ChromiumPath, consoleBrowser.err)
	}
	return consoleBrowser.ctx
}

// ConsolePage is one tab on the console of a server.
type ConsolePage struct {
	Tb   testing.TB
	Ctx  context.Context
	base string // the server's URL

	mu       sync.Mutex
	messages []chromedp.ConsoleMessage // exceptions and browser errors
	done     chan struct{}             // closed when the console reader ends
}

// OpenConsole opens the console of s in a new tab of the shared browser,
// sized width x height, at hash (a route such as "#/keys"). The test
// fails at cleanup if the page threw an exception nobody caught or the
// browser refused something under the page's Content-Security-Policy.
func OpenConsole(tb testing.TB, s *Server, hash string, width, height int64) *ConsolePage {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(sharedBrowser(tb), chromedp.WithNewBrowserContext())
	p := &ConsolePage{Tb: tb, Ctx: ctx, base: s.URL, done: make(chan struct{})}
	messages := chromedp.Console(ctx)
	go func() {
		defer close(p.done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || (m.Type == chromedp.ConsoleError && strings.Contains(m.Text, "Content Security Policy")) {
				p.mu.Lock()
				p.messages = append(p.messages, m)
				p.mu.Unlock()
			}
		}
	}()
	tb.Cleanup(func() {
		cancel()
		<-p.done
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, m := range p.messages {
			tb.Errorf("the console page logged %s (%s:%d)", m, m.URL, m.Line)
		}
	})
	p.Do(chromedp.EmulateViewport(width, height), chromedp.Navigate(s.URL+"/"+hash))
	return p
}

// Do runs actions on the page within ConsoleTimeout.
func (p *ConsolePage) Do(actions ...chromedp.Action[chromedp.Void]) {
	p.Tb.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, ConsoleTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.Tb.Fatalf("browser: %v\nthe page shows:\n%s", err, p.Shows())
	}
}

// Eval evaluates a JavaScript expression and decodes its JSON value into out.
func (p *ConsolePage) Eval(expr string, out any) {
	p.Tb.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, ConsoleTimeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](`JSON.stringify((() => { return `+expr+` })()) ?? "null"`))
	if err != nil {
		p.Tb.Fatalf("evaluating %s: %v", expr, err)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		p.Tb.Fatalf("evaluating %s: %s is not a JSON string", expr, raw)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(s), out); err != nil {
			p.Tb.Fatalf("evaluating %s = %s: decoding into %T: %v", expr, s, out, err)
		}
	}
}

// Shows returns the text the page shows, for failure messages.
func (p *ConsolePage) Shows() string {
	ctx, cancel := context.WithTimeout(p.Ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return fmt.Sprintf("(cannot read the page: %v)", err)
	}
	if len(s) > 4000 {
		s = s[:4000] + "…"
	}
	return s
}

// Js quotes s as a JavaScript string.
func Js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// findJS is an expression for the first element matching the CSS
// selector whose text contains text ("" for any), or null.
func findJS(selector, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%s)].find((e) => e.checkVisibility() && e.textContent.includes(%s)) || null`, Js(selector), Js(text))
}

// Wait polls a JavaScript condition until it is true.
func (p *ConsolePage) Wait(what, cond string) {
	p.Tb.Helper()
	deadline := time.Now().Add(ConsoleTimeout)
	for {
		var ok bool
		p.Eval(`!!(`+cond+`)`, &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			p.Tb.Fatalf("the page did not show %s within %v; it shows:\n%s", what, ConsoleTimeout, p.Shows())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitText waits until a visible element matching selector contains text.
func (p *ConsolePage) WaitText(selector, text string) {
	p.Tb.Helper()
	p.Wait(fmt.Sprintf("%q in %s", text, selector), findJS(selector, text))
}

// WaitNoText waits until no visible element matching selector contains text.
func (p *ConsolePage) WaitNoText(selector, text string) {
	p.Tb.Helper()
	p.Wait(fmt.Sprintf("no %q in %s", text, selector), "!("+findJS(selector, text)+")")
}

// Text returns the text of the first visible element matching selector,
// waiting for one.
func (p *ConsolePage) Text(selector string) string {
	p.Tb.Helper()
	p.WaitText(selector, "")
	var s string
	p.Eval(`(`+findJS(selector, "")+`).textContent`, &s)
	return s
}

// Count returns how many visible elements match selector.
func (p *ConsolePage) Count(selector string) int {
	p.Tb.Helper()
	var n int
	p.Eval(fmt.Sprintf(`[...document.querySelectorAll(%s)].filter((e) => e.checkVisibility()).length`, Js(selector)), &n)
	return n
}

// Click clicks the first visible element matching selector whose text
// contains text, waiting for it to be there and enabled.
func (p *ConsolePage) Click(selector, text string) {
	p.Tb.Helper()
	el := findJS(selector, text)
	p.Wait(fmt.Sprintf("a control %s %q to click", selector, text), `(`+el+`) && !(`+el+`).disabled`)
	p.Eval(`(`+el+`).click()`, nil)
}

// fill sets the value of the first visible field matching selector, as
// typing would: with input and change events.
func (p *ConsolePage) fill(selector, value string) {
	p.Tb.Helper()
	el := findJS(selector, "")
	p.Wait("a field "+selector, el)
	p.Eval(fmt.Sprintf(`(() => { const e = %s; e.focus(); e.value = %s; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, el, Js(value)), nil)
}

// FillLabelled fills the field whose label contains label.
func (p *ConsolePage) FillLabelled(label, value string) {
	p.Tb.Helper()
	p.fill(labelled(label), value)
}

// labelled is a selector for the control of the visible label containing
// text; it marks the control with a data attribute to select it by.
func labelled(text string) string {
	return fmt.Sprintf(`[data-label=%s]`, Js(text))
}

// MarkLabels gives each labelled control a data-label attribute holding
// its label's text, so that tests can find fields as a user does, by
// their labels.
func (p *ConsolePage) MarkLabels() {
	p.Tb.Helper()
	p.Eval(`(() => { for (const l of document.querySelectorAll("label[for]")) { const c = document.getElementById(l.htmlFor); if (c) c.dataset.label = l.textContent.trim(); } return true; })()`, nil)
}

// go moves the console to a route without reloading the page.
func (p *ConsolePage) GoTo(hash string) {
	p.Tb.Helper()
	p.Eval(`(location.hash = `+Js(hash)+`, true)`, nil)
}

// Confirm answers the open confirmation dialog with the button whose text
// contains action, typing what it asks to be typed first.
func (p *ConsolePage) Confirm(action string) {
	p.Tb.Helper()
	p.Wait("a confirmation dialog", `document.querySelector("dialog[open]")`)
	p.Eval(`(() => { const i = document.querySelector("dialog[open] input"); if (i) { const want = document.querySelector("dialog[open] code:last-of-type").textContent; i.value = want; i.dispatchEvent(new Event("input", {bubbles: true})); } return true; })()`, nil)
	p.Click("dialog[open] button", action)
	p.Wait("the dialog closed", `!document.querySelector("dialog[open]")`)
}

// LiveState returns the state the live indicator shows.
func (p *ConsolePage) LiveState() string {
	p.Tb.Helper()
	var s string
	p.Eval(`document.getElementById("live").dataset.state`, &s)
	return s
}

// Screenshot returns a PNG of the page's viewport.
func (p *ConsolePage) Screenshot() []byte {
	p.Tb.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, ConsoleTimeout)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.Tb.Fatalf("screenshot: %v", err)
	}
	return b
}

// ForgetNotice empties the page's notice, so that a wait for the next one
// cannot match the last.
func (p *ConsolePage) ForgetNotice() {
	p.Tb.Helper()
	p.Eval(`(document.getElementById("notice").textContent = "", true)`, nil)
}
