package sqlrow

import "github.com/flowrun/flowrun/store"

// TokenCols are the columns ScanToken reads, in order.
const TokenCols = `name, scope, hash, created_at`

// ScanToken reads an API token row of TokenCols.
func ScanToken(sc Scanner) (store.Token, error) {
	var t store.Token
	var scope string
	err := sc.Scan(&t.Name, &scope, &t.Hash, Time(&t.CreatedAt))
	t.Scope = store.TokenScope(scope)
	return t, err
}
