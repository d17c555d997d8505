package mcpexpose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStreamSet checks a session's stream set in its list and after it
// moved to a map: every stream put is found, a removed one is not, and
// each visits exactly the streams held.
func TestStreamSet(t *testing.T) {
	for _, n := range []int{1, fewStreams, fewStreams + 1, 3 * fewStreams} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var ss streamSet
			for i := range n {
				ss.put(&eventStream{id: fmt.Sprint("s", i)})
			}
			if got := ss.len(); got != n {
				t.Fatalf("len %d, want %d", got, n)
			}
			if (ss.many != nil) != (n > fewStreams) {
				t.Errorf("%d streams: in a map %v, want %v", n, ss.many != nil, n > fewStreams)
			}
			for i := range n {
				if st := ss.get(fmt.Sprint("s", i)); st == nil || st.id != fmt.Sprint("s", i) {
					t.Errorf("get s%d: %v", i, st)
				}
			}
			if ss.get("none") != nil {
				t.Error("get of an id never put found a stream")
			}
			ss.remove("s0")
			ss.remove("none")
			if ss.get("s0") != nil || ss.len() != n-1 {
				t.Errorf("after removing s0: found %v, len %d, want none and %d", ss.get("s0"), ss.len(), n-1)
			}
			var seen []string
			ss.each(func(st *eventStream) { seen = append(seen, st.id) })
			slices.Sort(seen)
			var want []string
			for i := 1; i < n; i++ {
				want = append(want, fmt.Sprint("s", i))
			}
			slices.Sort(want)
			if !slices.Equal(seen, want) {
				t.Errorf("each visited %v, want %v", seen, want)
			}
		})
	}
	var none *streamSet
	if none.get("s") != nil {
		t.Error("a session without streams found one")
	}
}

// replay returns the messages of a session's stream after index, as After
// yields them.
func replay(s *eventStore, session, stream string, index int) ([][]byte, error) {
	var out [][]byte
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// TestEventStoreManyStreamsOfASession replays streams of one session past
// the point where its set moves to a map, and forgets them all when the
// session closes.
func TestEventStoreManyStreamsOfASession(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(1 << 20)
	const n = 3 * fewStreams
	for i := range n {
		id := fmt.Sprint("s", i)
		if err := s.Open(ctx, "a", id); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, "a", id, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		id := fmt.Sprint("s", i)
		got, err := replay(s, "a", id, -1)
		if err != nil || len(got) != 1 || string(got[0]) != id {
			t.Errorf("replay of %s: %q, %v", id, got, err)
		}
	}
	if _, streams, _ := s.retained(); streams != n {
		t.Errorf("%d streams retained, want %d", streams, n)
	}
	if err := s.SessionClosed(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if size, streams, messages := s.retained(); size != 0 || streams != 0 || messages != 0 {
		t.Errorf("after the session closed: %d bytes, %d streams, %d messages, want none", size, streams, messages)
	}
	if _, err := replay(s, "a", "s0", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("replay after the session closed: %v, want ErrEventsPurged", err)
	}
}
