package prommcp

import "time"

// CountDecisionsAtEachScrape makes m read the decisions from the store at
// every scrape instead of reusing a count for seconds, for a test that
// scrapes right after a decision. Call it before m is scraped.
func CountDecisionsAtEachScrape(m *Metrics) {
	m.approvals.reuse = func(time.Duration) time.Duration { return 0 }
}
