package rank

import (
	"slices"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"github.create_issue", []string{"github", "create", "issue"}},
		{"getUserByID", []string{"get", "user", "by", "id"}},
		{"HTTPServer-v2", []string{"http", "server", "v2"}},
		{"List the open issues.", []string{"list", "the", "open", "issue"}},
		{"repositories, queries; status bus", []string{"repository", "query", "status", "bus"}},
		{"ÉCHO 日本語の天気", []string{"écho", "日本語の天気"}},
		{"*.^(a|b)+$ []", []string{"a", "b"}},
		{"", nil},
		{strings.Repeat("x", 65) + " ok", []string{"ok"}},
	}
	for _, c := range cases {
		if got := Terms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if q := Query(strings.Repeat("a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff gg hh ", 3)); len(q) != MaxTerms {
		t.Errorf("a long query keeps %d terms, want %d", len(q), MaxTerms)
	}
}

func TestRank(t *testing.T) {
	docs := []*Doc{
		NewDoc("mail.send", "Send mail", "Send a message to an address."),
		NewDoc("issues.create", "Create issue", "Create an issue; mention mail in the body."),
		NewDoc("issues.list", "List issues", "List the open issues."),
		NewDoc("weather", "", "Forecast."),
	}
	cases := []struct {
		q    string
		k    int
		want []int
	}{
		{"mail", 8, []int{0, 1}},  // the name and title outweigh a description
		{"issue", 8, []int{2, 1}}, // the shorter description counts its mention more
		{"create an issue", 1, []int{1}},
		{"nothing here", 8, nil},
		{"", 8, nil},
		{"mail", 0, nil},
	}
	for _, c := range cases {
		if got := Rank(docs, Query(c.q), c.k); !slices.Equal(got, c.want) {
			t.Errorf("Rank(%q, %d) = %v, want %v", c.q, c.k, got, c.want)
		}
	}
	// Equal scores keep the documents' order.
	twins := []*Doc{NewDoc("b", "", "same words"), NewDoc("a", "", "same words")}
	if got := Rank(twins, Query("same"), 8); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("ties ranked %v", got)
	}
	// The statistics are the given documents' alone: ranking a subset
	// gives the order ranking that subset as a whole catalog does.
	sub := []*Doc{docs[1], docs[2]}
	if got := Rank(sub, Query("issue list"), 8); !slices.Equal(got, []int{1, 0}) {
		t.Errorf("subset ranking %v", got)
	}
}
