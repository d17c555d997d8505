package site

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
)

func TestCallerAndError(t *testing.T) {
	s := Caller(0)
	_, _, line, _ := runtime.Caller(0)
	if want := fmt.Sprintf("site/site_test.go:%d", line-1); s.String() != want {
		t.Fatalf("Caller(0) = %s, want %s", s, want)
	}
	base := errors.New("boom")
	err := &Error{Site: s, Subject: "app.x", Err: base}
	if got, want := err.Error(), s.String()+": app.x: boom"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, base) {
		t.Error("Error does not unwrap to its cause")
	}
	if got, want := Errorf(s, "", "bad %d", 1).Error(), s.String()+": bad 1"; got != want {
		t.Errorf("Errorf without subject = %q, want %q", got, want)
	}
	if got := Caller(1000); got.String() != "unknown:0" {
		t.Errorf("Caller beyond the stack = %s", got)
	}
}
