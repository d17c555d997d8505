// Package site records where in the caller's source a definition was made, so
// that definition mistakes reported much later (at compile time) can point at
// the line to fix.
package site

import (
	"fmt"
	"path/filepath"
	"runtime"
)

// Site is a source position: the file (base name plus its parent directory)
// and the line.
type Site struct {
	File string
	Line int
}

// Caller returns the position of the function skip frames above the caller of
// Caller: Caller(1) inside a registration function is the line that called
// it.
func Caller(skip int) Site {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return Site{File: "unknown", Line: 0}
	}
	return Site{File: shorten(file), Line: line}
}

// String formats the site as "dir/file.go:line".
func (s Site) String() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

func shorten(file string) string {
	dir, base := filepath.Split(file)
	return filepath.Join(filepath.Base(dir), base)
}

// Error is a definition mistake tied to the site that made it. Its message
// reads like a compiler diagnostic: "dir/file.go:12: subject: what is wrong".
type Error struct {
	Site    Site
	Subject string
	Err     error
}

// Errorf returns an *Error for subject at s.
func Errorf(s Site, subject, format string, args ...any) *Error {
	return &Error{Site: s, Subject: subject, Err: fmt.Errorf(format, args...)}
}

func (e *Error) Error() string {
	if e.Subject == "" {
		return fmt.Sprintf("%s: %v", e.Site, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Site, e.Subject, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
