package mcpexpose

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// The "bearer token refused" record is written at most refusalLogBurst
// times per refusalLogInterval: anyone can send refused tokens, and an
// unbounded record per request would let them fill the log. The count of
// the records held back follows in one summary record.
const (
	refusalLogBurst    = 10
	refusalLogInterval = time.Minute
)

// logRate lets at most burst records through per window of interval; a
// window begins with the first record after the previous one ended. Records
// held back in a window are counted, and the count is written as one
// summary record before the first record of the next window: there is no
// timer, so a storm's last count waits for the next refusal. The zero value
// uses refusalLogBurst, refusalLogInterval and time.Now. It is safe for
// concurrent use.
type logRate struct {
	burst    int
	interval time.Duration
	now      func() time.Time

	mu    sync.Mutex
	start time.Time // of the current window; zero before the first record
	n     int       // records let through in it
	held  int       // records held back in it
}

// take reports whether a record may be written now and, when a window with
// records held back has just ended, how many and since when.
func (l *logRate) take() (ok bool, held int, since time.Time) {
	burst, interval, now := l.burst, l.interval, l.now
	if burst <= 0 {
		burst = refusalLogBurst
	}
	if interval <= 0 {
		interval = refusalLogInterval
	}
	if now == nil {
		now = time.Now
	}
	t := now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.start.IsZero() || t.Sub(l.start) >= interval {
		held, since = l.held, l.start
		l.start, l.n, l.held = t, 0, 0
	}
	if l.n < burst {
		l.n++
		return true, held, since
	}
	l.held++
	return false, held, since
}

// refused writes the "bearer token refused" record for reason, within the
// limit, after the summary of the window that ended, if any.
func (l *logRate) refused(ctx context.Context, logger *slog.Logger, reason error) {
	ok, held, since := l.take()
	if held > 0 {
		logger.LogAttrs(ctx, slog.LevelInfo, "more bearer tokens refused than logged",
			slog.Int("count", held), slog.Time("since", since))
	}
	if ok {
		logger.LogAttrs(ctx, slog.LevelInfo, "bearer token refused", slog.Any("reason", reason))
	}
}
