package realistic

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCompute checks the quote of the sample order by hand: silver's 5%
// discount, France's standard 20% and reduced 5.5% tax, shipping by
// weight plus customs, and both warnings.
func TestCompute(t *testing.T) {
	q := Compute(Sample())
	first := q.Lines[0] // HWR-1001: 2 × 129.00
	if first.SubtotalCents != 25800 || first.DiscountCents != 1290 || first.NetCents != 24510 ||
		first.TaxClass != "standard" || first.TaxRateBasis != 2000 || first.TaxCents != 4902 || first.TotalCents != 29412 ||
		first.WeightGrams != 1900 || first.Number != 1 {
		t.Errorf("line 1: %+v", first)
	}
	book := q.Lines[7] // BKS-4411: 39.99, reduced rate
	if book.TaxClass != "reduced" || book.TaxRateBasis != 550 || book.TaxCents != (3999-199)*550/10000 {
		t.Errorf("line 8: %+v", book)
	}
	if q.Totals.Lines != 12 || q.Totals.Quantity != 24 {
		t.Errorf("totals %+v", q.Totals)
	}
	sum := 0
	for _, l := range q.Lines {
		sum += l.TotalCents
	}
	if q.Totals.TotalCents != sum+q.Totals.ShippingCents || q.Totals.ShippingCents != 490+q.Totals.WeightGrams/1000*120+1500 {
		t.Errorf("totals %+v, lines' total %d", q.Totals, sum)
	}
	want := []string{"line 6 (SRV-0007): a service cannot be gift-wrapped", "ships to FR, billed in DE: customs may apply"}
	if !reflect.DeepEqual(q.Warnings, want) {
		t.Errorf("warnings %q, want %q", q.Warnings, want)
	}
	// The result depends on the order: another tier, another quote.
	r := Sample()
	r.Customer.Tier = "gold"
	if reflect.DeepEqual(Compute(r), q) {
		t.Error("the tier does not change the quote")
	}
}

// TestArguments: the arguments a call sends decode back to the sample.
func TestArguments(t *testing.T) {
	var r Request
	if err := json.Unmarshal(Arguments(), &r); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, Sample()) {
		t.Errorf("Arguments decode to %+v", r)
	}
}
