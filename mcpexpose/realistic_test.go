package mcpexpose_test

// The realistic workload of issue 42 (bench/internal/realistic, in the
// separate bench module), copied here so that this module's benchmarks and
// tests run it in process: a quote tool whose input is a nested order of
// about 2.4 KB and whose structured result is about 4.5 KB. Keep it equal
// to bench/internal/realistic/realistic.go (TestRealisticCopyMatchesTheBench
// compares the schemas derived from both).

import "fmt"

// realisticRequest is the tool's input: an order to price.
type realisticRequest struct {
	OrderID  string            `json:"orderId" jsonschema:"pattern=^ord-[0-9]{6}$"`
	Currency string            `json:"currency" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	Channel  string            `json:"channel" jsonschema:"enum=web,enum=phone,enum=partner"`
	Customer realisticCustomer `json:"customer"`
	Items    []realisticItem   `json:"items" jsonschema:"minItems=1,maxItems=50"`
}

// realisticCustomer is who orders.
type realisticCustomer struct {
	ID       string           `json:"id" jsonschema:"pattern=^cus-[0-9a-f]{8}$"`
	Name     string           `json:"name" jsonschema:"minLength=1,maxLength=120"`
	Email    string           `json:"email" jsonschema:"minLength=3,maxLength=254"`
	Tier     string           `json:"tier" jsonschema:"enum=standard,enum=silver,enum=gold"`
	Billing  realisticAddress `json:"billing"`
	Shipping realisticAddress `json:"shipping"`
}

// realisticAddress is a postal address.
type realisticAddress struct {
	Line1    string `json:"line1" jsonschema:"minLength=1,maxLength=200"`
	Line2    string `json:"line2" jsonschema:"maxLength=200"`
	City     string `json:"city" jsonschema:"minLength=1,maxLength=100"`
	Region   string `json:"region" jsonschema:"maxLength=100"`
	Postcode string `json:"postcode" jsonschema:"minLength=2,maxLength=12"`
	Country  string `json:"country" jsonschema:"enum=DE,enum=FR,enum=GB,enum=NL,enum=US"`
}

// realisticItem is one ordered article.
type realisticItem struct {
	SKU         string   `json:"sku" jsonschema:"pattern=^[A-Z]{3}-[0-9]{4}$"`
	Name        string   `json:"name" jsonschema:"minLength=1,maxLength=200"`
	Category    string   `json:"category" jsonschema:"enum=hardware,enum=software,enum=service,enum=books"`
	Quantity    int      `json:"quantity" jsonschema:"minimum=1,maximum=1000"`
	UnitCents   int      `json:"unitPriceCents" jsonschema:"minimum=0,maximum=10000000"`
	WeightGrams int      `json:"weightGrams" jsonschema:"minimum=0,maximum=100000"`
	Gift        bool     `json:"gift"`
	Tags        []string `json:"tags" jsonschema:"minItems=1,maxItems=8"`
}

// realisticQuote is the tool's result.
type realisticQuote struct {
	OrderID  string            `json:"orderId"`
	Currency string            `json:"currency" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	Customer realisticCustomer `json:"customer"`
	Lines    []realisticLine   `json:"lines"`
	Totals   realisticTotals   `json:"totals"`
	Warnings []string          `json:"warnings"`
}

// realisticLine is one priced item.
type realisticLine struct {
	Number        int      `json:"line" jsonschema:"minimum=1"`
	SKU           string   `json:"sku"`
	Name          string   `json:"name"`
	Category      string   `json:"category" jsonschema:"enum=hardware,enum=software,enum=service,enum=books"`
	Quantity      int      `json:"quantity" jsonschema:"minimum=1"`
	UnitCents     int      `json:"unitPriceCents" jsonschema:"minimum=0"`
	SubtotalCents int      `json:"subtotalCents" jsonschema:"minimum=0"`
	DiscountCents int      `json:"discountCents" jsonschema:"minimum=0"`
	NetCents      int      `json:"netCents" jsonschema:"minimum=0"`
	TaxClass      string   `json:"taxClass" jsonschema:"enum=standard,enum=reduced"`
	TaxRateBasis  int      `json:"taxRateBasisPoints" jsonschema:"minimum=0,maximum=10000"`
	TaxCents      int      `json:"taxCents" jsonschema:"minimum=0"`
	TotalCents    int      `json:"totalCents" jsonschema:"minimum=0"`
	WeightGrams   int      `json:"weightGrams" jsonschema:"minimum=0"`
	Gift          bool     `json:"gift"`
	Tags          []string `json:"tags"`
}

// realisticTotals sums the lines.
type realisticTotals struct {
	Lines         int `json:"lines" jsonschema:"minimum=0"`
	Quantity      int `json:"quantity" jsonschema:"minimum=0"`
	SubtotalCents int `json:"subtotalCents" jsonschema:"minimum=0"`
	DiscountCents int `json:"discountCents" jsonschema:"minimum=0"`
	TaxCents      int `json:"taxCents" jsonschema:"minimum=0"`
	ShippingCents int `json:"shippingCents" jsonschema:"minimum=0"`
	TotalCents    int `json:"totalCents" jsonschema:"minimum=0"`
	WeightGrams   int `json:"weightGrams" jsonschema:"minimum=0"`
}

// realisticDiscount is the tier's discount in basis points.
var realisticDiscount = map[string]int{"standard": 0, "silver": 500, "gold": 1000}

// realisticTaxRate is the shipping country's tax rate in basis points; books and
// services pay the reduced rate.
var realisticTaxRate = map[string][2]int{
	"DE": {1900, 700}, "FR": {2000, 550}, "GB": {2000, 0}, "NL": {2100, 900}, "US": {0, 0},
}

// realisticCompute prices r: the tool's work, the same on every server. It
// reads every field, so that a server that decoded one wrongly answers
// wrongly.
func realisticCompute(r realisticRequest) realisticQuote {
	q := realisticQuote{
		OrderID:  r.OrderID,
		Currency: r.Currency,
		Customer: r.Customer,
		Lines:    make([]realisticLine, len(r.Items)),
		Warnings: []string{},
	}
	rates := realisticTaxRate[r.Customer.Shipping.Country]
	for i, it := range r.Items {
		l := realisticLine{
			Number: i + 1, SKU: it.SKU, Name: it.Name, Category: it.Category,
			Quantity: it.Quantity, UnitCents: it.UnitCents,
			WeightGrams: it.WeightGrams * it.Quantity, Gift: it.Gift,
			Tags: append([]string(nil), it.Tags...),
		}
		l.SubtotalCents = it.UnitCents * it.Quantity
		l.DiscountCents = l.SubtotalCents * realisticDiscount[r.Customer.Tier] / 10000
		l.NetCents = l.SubtotalCents - l.DiscountCents
		l.TaxClass, l.TaxRateBasis = "standard", rates[0]
		if it.Category == "books" || it.Category == "service" {
			l.TaxClass, l.TaxRateBasis = "reduced", rates[1]
		}
		l.TaxCents = l.NetCents * l.TaxRateBasis / 10000
		l.TotalCents = l.NetCents + l.TaxCents
		q.Lines[i] = l

		t := &q.Totals
		t.Lines++
		t.Quantity += l.Quantity
		t.SubtotalCents += l.SubtotalCents
		t.DiscountCents += l.DiscountCents
		t.TaxCents += l.TaxCents
		t.WeightGrams += l.WeightGrams
		if it.Gift && it.Category == "service" {
			q.Warnings = append(q.Warnings, fmt.Sprintf("line %d (%s): a service cannot be gift-wrapped", l.Number, l.SKU))
		}
	}
	t := &q.Totals
	t.ShippingCents = 490 + t.WeightGrams/1000*120
	if r.Customer.Shipping.Country != r.Customer.Billing.Country {
		t.ShippingCents += 1500
		q.Warnings = append(q.Warnings, fmt.Sprintf("ships to %s, billed in %s: customs may apply",
			r.Customer.Shipping.Country, r.Customer.Billing.Country))
	}
	t.TotalCents = t.SubtotalCents - t.DiscountCents + t.TaxCents + t.ShippingCents
	return q
}

// realisticSample is the order every call of the realistic workload sends.
func realisticSample() realisticRequest {
	r := realisticRequest{
		OrderID:  "ord-004217",
		Currency: "EUR",
		Channel:  "partner",
		Customer: realisticCustomer{
			ID:    "cus-7f3a9c21",
			Name:  "Grete Oberländer",
			Email: "m.oberlaender@example.org",
			Tier:  "silver",
			Billing: realisticAddress{
				Line1: "Kurfürstendamm 195", Line2: "Aufgang B",
				City: "Berlin", Region: "Berlin", Postcode: "10707", Country: "DE",
			},
			Shipping: realisticAddress{
				Line1: "12 Rue des Petits-Champs", Line2: "Bâtiment C",
				City: "Paris", Region: "Île-de-France", Postcode: "75001", Country: "FR",
			},
		},
	}
	items := []struct {
		sku, name, cat string
		qty, cents, g  int
		gift           bool
		tags           []string
	}{
		{"HWR-1001", "Mechanical keyboard", "hardware", 2, 12900, 950, false, []string{"office", "peripheral"}},
		{"HWR-1002", "Wireless mouse", "hardware", 3, 4990, 120, false, []string{"office", "peripheral"}},
		{"HWR-2040", "27-inch monitor, USB-C", "hardware", 1, 32900, 6100, false, []string{"display", "usb-c"}},
		{"SFT-0300", "Office suite", "software", 5, 9900, 0, false, []string{"licence", "annual"}},
		{"SFT-0310", "Backup service, 1 TB", "software", 1, 5900, 0, false, []string{"licence", "cloud"}},
		{"SRV-0007", "On-site installation", "service", 1, 24000, 0, true, []string{"on-site", "installation"}},
		{"SRV-0012", "Warranty, 3 years", "service", 2, 7900, 0, false, []string{"warranty"}},
		{"BKS-4411", "The Go Programming Language", "books", 1, 3999, 760, true, []string{"programming", "go"}},
		{"BKS-4420", "Data-Intensive Apps", "books", 1, 4599, 1200, false, []string{"architecture"}},
		{"HWR-3310", "USB-C docking station", "hardware", 1, 18900, 480, false, []string{"usb-c", "dock"}},
		{"HWR-3312", "Laptop stand", "hardware", 2, 3900, 1100, false, []string{"office", "ergonomics"}},
		{"HWR-0099", "Cable kit, 2 m", "hardware", 4, 1990, 300, false, []string{"cables", "usb-c", "hdmi"}},
	}
	for _, it := range items {
		r.Items = append(r.Items, realisticItem{
			SKU: it.sku, Name: it.name, Category: it.cat, Quantity: it.qty,
			UnitCents: it.cents, WeightGrams: it.g, Gift: it.gift, Tags: it.tags,
		})
	}
	return r
}
