package compare

// LoadOne opens one bundle as Load opens each of its arguments: checked
// against its sums first (what it found kept in its Parts' Tampered and
// Unverified), its medians derived again from cells.jsonl. A reader of
// one bundle beside another of its own (reproduce) judges it as compare
// would.
func LoadOne(path string) (Bundle, error) {
	b, _, err := load(path)
	return b, err
}
