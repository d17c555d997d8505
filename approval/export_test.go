package approval

// SetMaxSignIns bounds the sign-ins s keeps at n instead of MaxSignIns,
// for a test to see the bound hold without saving ten thousand; s is one
// of this package's stores.
func SetMaxSignIns(s any, n int) {
	switch s := s.(type) {
	case *SQLiteStore:
		s.maxSignIns = n
	case *PostgresStore:
		s.maxSignIns = n
	default:
		panic("approval.SetMaxSignIns: not one of this package's stores")
	}
}
