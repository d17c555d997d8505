package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"
)

const (
	// stderrLineBytes bounds each line of a child's standard error; the
	// rest of a longer line is dropped.
	stderrLineBytes = 4 << 10
	// stderrQuiet is how long a child's standard error may pause inside
	// one record: lines read together, or written closer together than
	// this, as a crash trace or a multi-line warning is, are one record.
	stderrQuiet = 50 * time.Millisecond
	// stderrRecordLines bounds the lines of one record; a longer burst
	// goes on in the next record.
	stderrRecordLines = 64
)

// logLines logs what the child writes to r at level ("info", "debug",
// "warn" or "discard") until r ends. Each line is cut at stderrLineBytes.
// Lines that come in one burst (no pause of stderrQuiet, at most
// stderrRecordLines) are one record, "upstream stderr", whose line
// attribute holds them joined by newlines and whose lines attribute counts
// them when there are several: a Node.js stack trace is one record, not
// twenty.
func logLines(r io.ReadCloser, logger *slog.Logger, level string) {
	lvl := slog.LevelInfo
	switch level {
	case "discard":
		io.Copy(io.Discard, r)
		r.Close()
		return
	case "debug":
		lvl = slog.LevelDebug
	case "warn":
		lvl = slog.LevelWarn
	}
	lines := make(chan stderrLine, stderrRecordLines)
	go readLines(r, lines)
	var rec []string
	flush := func() {
		switch len(rec) {
		case 0:
			return
		case 1:
			logger.Log(context.Background(), lvl, "upstream stderr", slog.String("line", rec[0]))
		default:
			logger.Log(context.Background(), lvl, "upstream stderr",
				slog.String("line", strings.Join(rec, "\n")), slog.Int("lines", len(rec)))
		}
		rec = rec[:0]
	}
	quiet := time.NewTimer(stderrQuiet)
	quiet.Stop()
	defer quiet.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				flush()
				return
			}
			rec = append(rec, line.text)
			if len(rec) == stderrRecordLines {
				flush()
			}
			if line.more {
				quiet.Stop() // the next line is already read
			} else {
				quiet.Reset(stderrQuiet)
			}
		case <-quiet.C:
			flush()
		}
	}
}

// stderrLine is one line of a child's standard error; more says that the
// whole next line had already arrived when it was read.
type stderrLine struct {
	text string
	more bool
}

// readLines sends each line of r, without its line ending and cut at
// stderrLineBytes, on lines, and closes lines and r when r ends.
func readLines(r io.ReadCloser, lines chan<- stderrLine) {
	defer close(lines)
	defer r.Close()
	br := bufio.NewReaderSize(r, stderrLineBytes)
	for {
		line, err := br.ReadSlice('\n')
		cut := errors.Is(err, bufio.ErrBufferFull)
		text := string(trimNewline(line))
		if cut { // drop the rest of the long line
			text += " …(cut)"
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if len(line) > 0 {
			// More only when a whole next line is already here: a prompt
			// written after a line, which waits without a newline, must
			// not hold that line back.
			next, _ := br.Peek(br.Buffered())
			lines <- stderrLine{text: text, more: bytes.IndexByte(next, '\n') >= 0}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
