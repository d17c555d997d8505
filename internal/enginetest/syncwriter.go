package enginetest

import (
	"bytes"
	"sync"
)

// syncWriter is a bytes.Buffer safe for the writes of a process's two
// output streams and a reader.
type syncWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
