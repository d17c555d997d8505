package docdefault

import (
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{time.Second, "1 second"},
		{30 * time.Second, "30 seconds"},
		{90 * time.Second, "90 seconds"},
		{2 * time.Minute, "2 minutes"},
		{time.Hour, "1 hour"},
		{7 * 24 * time.Hour, "7 days"},
		{1500 * time.Millisecond, "1500 milliseconds"},
		{Bytes(1 << 20), "1 MiB"},
		{Bytes(64 << 10), "64 KiB"},
		{Bytes(100), "100 bytes"},
		{Bytes(1), "1 byte"},
		{1000, "1000"},
		{int64(65536), "65536"},
		{"agnara:tasks:", `"agnara:tasks:"`},
	} {
		if got := Format(tc.v); got != tc.want {
			t.Errorf("Format(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestCheck holds the stated values of testdata/p, and fails with each
// value or declaration changed.
func TestCheck(t *testing.T) {
	right := []Stated{
		{"Options.Size", "Default: %v", Bytes(1 << 20)},
		{"Options.Count", "Default: %v", 1000},
		{"Options.Prefix", "Default: %v", "p:keys:"},
		{"Options.Wait", "Zero means %v", 30 * time.Second},
		{"T.M", "more than %v keys", 64},
		{"F", "at most %v", 7 * 24 * time.Hour},
	}
	Check(t, "testdata/p", right)

	for _, wrong := range []Stated{
		{"Options.Size", "Default: %v", Bytes(2 << 20)},
		{"Options.Count", "Default: %v", 1}, // a prefix of 1000
		{"Options.Prefix", "Default: %v", "p:"},
		{"Options.Wait", "Zero means %v", time.Minute},
		{"T.M", "more than %v keys", 63},
		{"F", "at most %v", 6 * 24 * time.Hour},
		{"Options.Missing", "Default: %v", 1},
		{"G", "at most %v", 7 * 24 * time.Hour},
	} {
		var rec recorder
		Check(&rec, "testdata/p", []Stated{wrong})
		if rec.errors != 1 {
			t.Errorf("Check of %+v: %d errors, want 1", wrong, rec.errors)
		}
	}
}

func TestPackageDoc(t *testing.T) {
	all, err := docs("testdata/p")
	if err != nil {
		t.Fatal(err)
	}
	if !says(all["package"], "Package p states its defaults") {
		t.Errorf("package doc %q", all["package"])
	}
}

// recorder counts the errors Check reports.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.errors++ }
