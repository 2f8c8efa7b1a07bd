package console

import (
	"github.com/httpkv/httpkv/tests/e2e"

	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// consoleTimeout bounds each wait on the console: a page loading, a view
// showing what the test wrote. The browser and a server built with -race
// share two loaded cores with other tests (and, in a check of the suite,
// with a second run of it): a bound for a hang, not for speed.
const consoleTimeout = 2 * time.Minute

// consoleBrowser is the one headless Chromium the console tests share;
// each test opens its own tab in a browser context of its own (its own
// storage). TestMain closes it after the tests.
var consoleBrowser struct {
	once   sync.Once
	ctx    context.Context // the browser's context, for new tabs
	cancel context.CancelFunc
	err    error
}

// sharedBrowser starts the shared browser on first use. chromedp gives it
// a fresh user data directory and, on close, kills what is left of it and
// removes the directory. The flags keep it off the network beyond the
// tests' own servers: this machine's closed network makes it hang
// otherwise.
func sharedBrowser(tb testing.TB) context.Context {
	tb.Helper()
	e2e.RequireChromium(tb)
	consoleBrowser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(e2e.ChromiumPath),
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
		tb.Fatalf("starting %s: %v", e2e.ChromiumPath, consoleBrowser.err)
	}
	return consoleBrowser.ctx
}

// closeConsoleBrowser stops the shared browser, if it was started, and
// waits until it has exited.
func closeConsoleBrowser() {
	if consoleBrowser.cancel != nil {
		consoleBrowser.cancel()
	}
}

// consolePage is one tab on the console of a server.
type consolePage struct {
	tb   testing.TB
	ctx  context.Context
	base string // the server's URL

	mu       sync.Mutex
	messages []chromedp.ConsoleMessage // exceptions and browser errors
	done     chan struct{}             // closed when the console reader ends
}

// openConsole opens the console of s in a new tab of the shared browser,
// sized width x height, at hash (a route such as "#/keys"). The test
// fails at cleanup if the page threw an exception nobody caught or the
// browser refused something under the page's Content-Security-Policy.
func openConsole(tb testing.TB, s *e2e.Server, hash string, width, height int64) *consolePage {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(sharedBrowser(tb), chromedp.WithNewBrowserContext())
	p := &consolePage{tb: tb, ctx: ctx, base: s.URL, done: make(chan struct{})}
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
	p.do(chromedp.EmulateViewport(width, height), chromedp.Navigate(s.URL+"/"+hash))
	return p
}

// do runs actions on the page within consoleTimeout.
func (p *consolePage) do(actions ...chromedp.Action[chromedp.Void]) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, consoleTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.tb.Fatalf("browser: %v\nthe page shows:\n%s", err, p.shows())
	}
}

// eval evaluates a JavaScript expression and decodes its JSON value into out.
func (p *consolePage) eval(expr string, out any) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, consoleTimeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](`JSON.stringify((() => { return `+expr+` })()) ?? "null"`))
	if err != nil {
		p.tb.Fatalf("evaluating %s: %v", expr, err)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		p.tb.Fatalf("evaluating %s: %s is not a JSON string", expr, raw)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(s), out); err != nil {
			p.tb.Fatalf("evaluating %s = %s: decoding into %T: %v", expr, s, out, err)
		}
	}
}

// shows returns the text the page shows, for failure messages.
func (p *consolePage) shows() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
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

// js quotes s as a JavaScript string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// findJS is an expression for the first element matching the CSS
// selector whose text contains text ("" for any), or null.
func findJS(selector, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%s)].find((e) => e.checkVisibility() && e.textContent.includes(%s)) || null`, js(selector), js(text))
}

// wait polls a JavaScript condition until it is true.
func (p *consolePage) wait(what, cond string) {
	p.tb.Helper()
	deadline := time.Now().Add(consoleTimeout)
	for {
		var ok bool
		p.eval(`!!(`+cond+`)`, &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			p.tb.Fatalf("the page did not show %s within %v; it shows:\n%s", what, consoleTimeout, p.shows())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits until a visible element matching selector contains text.
func (p *consolePage) waitText(selector, text string) {
	p.tb.Helper()
	p.wait(fmt.Sprintf("%q in %s", text, selector), findJS(selector, text))
}

// waitNoText waits until no visible element matching selector contains text.
func (p *consolePage) waitNoText(selector, text string) {
	p.tb.Helper()
	p.wait(fmt.Sprintf("no %q in %s", text, selector), "!("+findJS(selector, text)+")")
}

// text returns the text of the first visible element matching selector,
// waiting for one.
func (p *consolePage) text(selector string) string {
	p.tb.Helper()
	p.waitText(selector, "")
	var s string
	p.eval(`(`+findJS(selector, "")+`).textContent`, &s)
	return s
}

// count returns how many visible elements match selector.
func (p *consolePage) count(selector string) int {
	p.tb.Helper()
	var n int
	p.eval(fmt.Sprintf(`[...document.querySelectorAll(%s)].filter((e) => e.checkVisibility()).length`, js(selector)), &n)
	return n
}

// click clicks the first visible element matching selector whose text
// contains text, waiting for it to be there and enabled.
func (p *consolePage) click(selector, text string) {
	p.tb.Helper()
	el := findJS(selector, text)
	p.wait(fmt.Sprintf("a control %s %q to click", selector, text), `(`+el+`) && !(`+el+`).disabled`)
	p.eval(`(`+el+`).click()`, nil)
}

// fill sets the value of the first visible field matching selector, as
// typing would: with input and change events.
func (p *consolePage) fill(selector, value string) {
	p.tb.Helper()
	el := findJS(selector, "")
	p.wait("a field "+selector, el)
	p.eval(fmt.Sprintf(`(() => { const e = %s; e.focus(); e.value = %s; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, el, js(value)), nil)
}

// fillLabelled fills the field whose label contains label.
func (p *consolePage) fillLabelled(label, value string) {
	p.tb.Helper()
	p.fill(labelled(label), value)
}

// labelled is a selector for the control of the visible label containing
// text; it marks the control with a data attribute to select it by.
func labelled(text string) string {
	return fmt.Sprintf(`[data-label=%s]`, js(text))
}

// markLabels gives each labelled control a data-label attribute holding
// its label's text, so that tests can find fields as a user does, by
// their labels.
func (p *consolePage) markLabels() {
	p.tb.Helper()
	p.eval(`(() => { for (const l of document.querySelectorAll("label[for]")) { const c = document.getElementById(l.htmlFor); if (c) c.dataset.label = l.textContent.trim(); } return true; })()`, nil)
}

// go moves the console to a route without reloading the page.
func (p *consolePage) goTo(hash string) {
	p.tb.Helper()
	p.eval(`(location.hash = `+js(hash)+`, true)`, nil)
}

// confirm answers the open confirmation dialog with the button whose text
// contains action, typing what it asks to be typed first.
func (p *consolePage) confirm(action string) {
	p.tb.Helper()
	p.wait("a confirmation dialog", `document.querySelector("dialog[open]")`)
	p.eval(`(() => { const i = document.querySelector("dialog[open] input"); if (i) { const want = document.querySelector("dialog[open] code:last-of-type").textContent; i.value = want; i.dispatchEvent(new Event("input", {bubbles: true})); } return true; })()`, nil)
	p.click("dialog[open] button", action)
	p.wait("the dialog closed", `!document.querySelector("dialog[open]")`)
}

// liveState returns the state the live indicator shows.
func (p *consolePage) liveState() string {
	p.tb.Helper()
	var s string
	p.eval(`document.getElementById("live").dataset.state`, &s)
	return s
}

// screenshot returns a PNG of the page's viewport.
func (p *consolePage) screenshot() []byte {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, consoleTimeout)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.tb.Fatalf("screenshot: %v", err)
	}
	return b
}

// forgetNotice empties the page's notice, so that a wait for the next one
// cannot match the last.
func (p *consolePage) forgetNotice() {
	p.tb.Helper()
	p.eval(`(document.getElementById("notice").textContent = "", true)`, nil)
}
