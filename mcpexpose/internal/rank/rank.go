// Package rank orders tool definitions against a search query by BM25F
// (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25
// and Beyond", 2009): a tool's name, title and description are three
// fields of one document, each with its own weight and length
// normalisation, so that a word in a name counts for more than the same
// word in a description.
//
// The statistics a score depends on (how many documents hold a term, the
// fields' average lengths) are computed over the documents a ranking is
// given, at each ranking, never over a wider corpus: a caller who may see
// some tools gets an order that tools it may not see cannot change
// (ADR 83). A ranking reads each document's precomputed term counts, so
// its cost is in the number of documents times the number of query terms.
package rank

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The fields of a document, in the order of [Doc]'s counts.
const (
	Name = iota
	Title
	Description
	fields
)

// weights are the fields' boosts: a name says what a tool is, a title
// says it for people, a description says much else besides.
var weights = [fields]float64{Name: 3, Title: 2, Description: 1}

// BM25's constants, the customary ones: k1 saturates a term's frequency,
// b is how much a field's length is normalised by.
const (
	k1 = 1.2
	b  = 0.75
)

// MaxTerms bounds the distinct terms of a query that are ranked by, and
// maxTermLen the bytes of one term: a query's cost is bounded whatever
// its length.
const (
	MaxTerms   = 32
	maxTermLen = 64
)

// Doc is one document: the terms of each field and their counts. It is
// immutable once built, and safe for concurrent use.
type Doc struct {
	tf  map[string][fields]uint16
	len [fields]int
}

// NewDoc returns the document of a tool with the given name, title and
// description.
func NewDoc(name, title, description string) *Doc {
	d := &Doc{tf: map[string][fields]uint16{}}
	for f, text := range [fields]string{name, title, description} {
		for _, t := range Terms(text) {
			c := d.tf[t]
			if c[f] < math.MaxUint16 {
				c[f]++
			}
			d.tf[t] = c
			d.len[f]++
		}
	}
	return d
}

// Rank returns the indices in docs of at most k documents that match
// query's terms, best first; documents that score the same keep their
// order in docs, so a ranking is deterministic. Documents that match no
// term are not returned.
func Rank(docs []*Doc, query []string, k int) []int {
	if len(docs) == 0 || len(query) == 0 || k <= 0 {
		return nil
	}
	var avg [fields]float64
	for _, d := range docs {
		for f := range fields {
			avg[f] += float64(d.len[f])
		}
	}
	for f := range fields {
		avg[f] /= float64(len(docs))
	}
	n := float64(len(docs))
	scores := make([]float64, len(docs))
	for _, t := range query {
		df := 0
		for _, d := range docs {
			if _, ok := d.tf[t]; ok {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		for i, d := range docs {
			c, ok := d.tf[t]
			if !ok {
				continue
			}
			var w float64 // the term's weighted, length-normalised frequency
			for f := range fields {
				if c[f] == 0 {
					continue
				}
				norm := 1.0
				if avg[f] > 0 {
					norm = 1 - b + b*float64(d.len[f])/avg[f]
				}
				w += weights[f] * float64(c[f]) / norm
			}
			scores[i] += idf * w / (k1 + w)
		}
	}
	var hits []int
	for i, sc := range scores {
		if sc > 0 {
			hits = append(hits, i)
		}
	}
	slices.SortStableFunc(hits, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Query returns the distinct terms of a query, in order, at most
// MaxTerms of them.
func Query(q string) []string {
	var out []string
	for _, t := range Terms(q) {
		if !slices.Contains(out, t) {
			out = append(out, t)
			if len(out) == MaxTerms {
				break
			}
		}
	}
	return out
}

// Terms splits text into terms: runs of letters and digits, split again
// where camelCase changes case ("getUser", "HTTPServer"), lower-cased,
// with an English plural folded ("issues" and "issue" are one term).
// Punctuation, spaces and symbols ('.', '_', '-', '*', ...) only separate
// terms. A term longer than 64 bytes is dropped: no name or word is.
func Terms(text string) []string {
	var out []string
	start := -1
	add := func(end int) {
		if start >= 0 && end > start {
			if t := fold(text[start:end]); t != "" {
				out = append(out, t)
			}
		}
		start = -1
	}
	var prev rune
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			add(i)
			prev = 0
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) && unicode.IsLower(prev) {
			add(i) // getUser: get | User
			start = i
		} else if unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev) {
			// HTTPServer: HTTP | Server, at the capital before the lower.
			at := i - utf8.RuneLen(prev)
			add(at)
			start = at
		}
		prev = r
	}
	add(len(text))
	return out
}

// fold lower-cases a term and folds an English plural, or returns "" for
// a term too long to be one.
func fold(t string) string {
	if len(t) > maxTermLen {
		return ""
	}
	t = strings.ToLower(t)
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		return t[:len(t)-3] + "y"
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") && !strings.HasSuffix(t, "is"):
		return t[:len(t)-1]
	}
	return t
}
