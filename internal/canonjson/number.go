package canonjson

import (
	"math"
	"strconv"
)

// appendNumber writes the finite double f as ECMAScript's
// Number.prototype.toString does (ECMA-262 Number::toString, which RFC 8785
// §3.2.2.3 adopts). The digits are the shortest that round-trip, which is
// what strconv produces with precision -1; only their layout is ECMAScript's.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // both +0 and -0
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Below 2^53 every integer is exact, so the shortest digits padded with
	// zeros (ECMAScript's integer layout) are the integer itself.
	if f < 1<<53 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}

	// s is "d.ddde±xx" or "de±xx": the k shortest digits and the exponent.
	var scratch [32]byte
	s := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	var digits [24]byte
	k := 0
	i := 0
	for ; s[i] != 'e'; i++ {
		if s[i] != '.' {
			digits[k] = s[i]
			k++
		}
	}
	exp := 0
	for _, c := range s[i+2:] { // after 'e' comes a sign, then digits
		exp = exp*10 + int(c-'0')
	}
	if s[i+1] == '-' {
		exp = -exp
	}
	// In ECMA-262's terms the value is 0.d1d2...dk × 10^n.
	n := exp + 1
	d := digits[:k]

	switch {
	case k <= n && n <= 21:
		// An integer below 10^21: digits, then n-k zeros.
		dst = append(dst, d...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		// The decimal point falls inside the digits.
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		// A small fraction: "0.", -n zeros, then the digits.
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		// Exponential: d[.ddd]e±(n-1), the sign always written.
		dst = append(dst, d[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
