package katatest

import (
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"gokata/internal/katatest/shake"
)

// Clock is the mock clock the hidden tests inject ([H.Clk]): a clock.Mock
// whose timers fire once each, whichever goroutines make timers while the
// test moves time.
//
// clock.Mock's Timer fires the timers already due, as Add does: it picks
// the next one under its lock, lets the lock go, then fires it. Two
// goroutines doing that at once (the test's Add while the code calls
// Timer, or two of the code's goroutines each calling Timer(0)) can pick
// the same timer; the second send on its full channel then blocks with the
// Mock's lock held, and every goroutine that touches the clock hangs,
// correct code included. So Clock makes its timers with AfterFunc, which
// fires nothing, and sends on the timer's channel itself; only the test's
// Add, Set and WaitForAllTimers fire timers, one goroutine at a time.
type Clock struct {
	*clock.Mock
	turn chan struct{} // a lock that a synctest bubble sees as blocking

	mu      sync.Mutex
	made    []*clock.Timer  // every timer made by Timer, After, Sleep and AfterFunc
	tickers []*clock.Ticker // every ticker made by Ticker and Tick
}

// NewClock returns a mock clock at the Unix epoch. Make it inside the
// bubble that uses it.
func NewClock() *Clock {
	return &Clock{Mock: clock.NewMock(), turn: make(chan struct{}, 1)}
}

// Timer makes a timer that fires d from now, at once when d <= 0. Its
// channel holds one value; a firing that finds it full is dropped (a timer
// reset before its last value was read), where clock.Mock would hang.
func (c *Clock) Timer(d time.Duration) *clock.Timer {
	ch := make(chan time.Time, 1)
	fire := func() {
		select {
		case ch <- c.Mock.Now():
		default:
		}
	}
	t := c.AfterFunc(d, fire)
	t.C = ch
	if d <= 0 && t.Stop() { // not fired yet by a clock move
		fire()
	}
	return t
}

// AfterFunc calls f on its own goroutine once the clock has moved d.
func (c *Clock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	t := c.Mock.AfterFunc(d, f)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made = append(c.made, t)
	return t
}

// StopRunning stops every timer made on the clock that has neither fired
// nor been stopped, and returns how many there were. Call it on the
// goroutine that made the call under test, right after the call returns,
// with no settle in between: a timer the code stops a moment later, from a
// goroutine that outlives the call, is then still counted, where
// [H.PendingTimer] would find it gone. Only where that call is the clock's
// only user: it counts the test's own timers too.
func (c *Clock) StopRunning() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.made {
		if t.Stop() {
			n++
		}
	}
	c.made = nil
	return n
}

// Ticker makes a ticker that ticks every d once the clock moves, recorded
// so that [Clock.Ticking] can tell whether the code stopped it. A period
// below 1 panics, as time.NewTicker does (on clock.Mock such a ticker
// would tick for ever without the clock moving on).
func (c *Clock) Ticker(d time.Duration) *clock.Ticker {
	if d <= 0 {
		panic("non-positive interval for NewTicker")
	}
	t := c.Mock.Ticker(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tickers = append(c.tickers, t)
	return t
}

// Tick is Ticker(d).C: a ticker that cannot be stopped.
func (c *Clock) Tick(d time.Duration) <-chan time.Time { return c.Ticker(d).C }

// Ticking stops every ticker made on the clock that is still running and
// returns how many there were, and the longest period among them. Call it
// once the code under test has returned and settled. A ticker left running
// is what makes clock.Mock's WaitForAllTimers spin for ever: each tick
// registers the next.
func (c *Clock) Ticking() (n int, longest time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.tickers {
		if !tickerStopped(t) {
			n++
			longest = max(longest, tickerPeriod(t))
			t.Stop()
		}
	}
	c.tickers = nil
	return n, longest
}

// RunOut is how far to move the clock in one step to run out the waits of
// code that ignores its ctx: to the end of time while no ticker runs; with
// one running, a hundred of the shortest period, since each tick registers
// the next and a move to the end of time would never end.
func (c *Clock) RunOut() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	step := time.Duration(math.MaxInt64)
	for _, t := range c.tickers {
		if p := tickerPeriod(t); !tickerStopped(t) && p <= step/100 {
			step = 100 * p
		}
	}
	return step
}

// tickerStopped and tickerPeriod read clock.Ticker's unexported fields: a
// mock ticker offers no other way to ask whether it was stopped without
// moving the clock. TestClockTickingSeesStoppedTickers fails if a new
// version of the clock module renames them.
func tickerStopped(t *clock.Ticker) bool {
	return reflect.ValueOf(t).Elem().FieldByName("stopped").Bool()
}

func tickerPeriod(t *clock.Ticker) time.Duration {
	return time.Duration(reflect.ValueOf(t).Elem().FieldByName("d").Int())
}

// Now reads the clock. The code may act on what it read a moment later:
// while the schedule is shaken, it yields there, so that the test's move of
// the clock can come in between.
func (c *Clock) Now() time.Time {
	now := c.Mock.Now()
	shake.Point()
	return now
}

// Since is Now().Sub(t), and yields as Now does.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is t.Sub(Now()), and yields as Now does.
func (c *Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// After is Timer(d).C.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.Timer(d).C }

// Sleep waits until the clock has moved d.
func (c *Clock) Sleep(d time.Duration) { <-c.After(d) }

// Add moves the clock forward by d, firing the timers due on the way.
func (c *Clock) Add(d time.Duration) {
	c.turn <- struct{}{}
	defer func() { <-c.turn }()
	c.Mock.Add(d)
}

// Set moves the clock to t, firing the timers due on the way.
func (c *Clock) Set(t time.Time) {
	c.turn <- struct{}{}
	defer func() { <-c.turn }()
	c.Mock.Set(t)
}

// WaitForAllTimers moves the clock until every timer has fired.
func (c *Clock) WaitForAllTimers() time.Time {
	c.turn <- struct{}{}
	defer func() { <-c.turn }()
	return c.Mock.WaitForAllTimers()
}
