package sqlite

import (
	"fmt"
	"strings"
	"sync"
)

// rowsSQL is a family of multi-row statements: get(n) is the one for n
// rows, 2 <= n <= max. Each is built on first use and kept, so a process
// that writes a few rows at a time builds only the few it runs.
type rowsSQL struct {
	max   int
	build func(n int) string

	mu sync.Mutex
	qs []string // index n: n rows; "" not built yet
}

// get returns the statement for n rows, building it on first use.
func (r *rowsSQL) get(n int) string {
	if n < 2 || n > r.max {
		panic(fmt.Sprintf("rowsSQL.get(%d): not between 2 and %d", n, r.max))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.qs == nil {
		r.qs = make([]string, r.max+1)
	}
	if r.qs[n] == "" {
		r.qs[n] = r.build(n)
	}
	return r.qs[n]
}

// built reports whether get(n) has been asked for.
func (r *rowsSQL) built(n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.qs != nil && r.qs[n] != ""
}

// contains reports whether q is a statement of the family already built:
// one not built yet has not been run either.
func (r *rowsSQL) contains(q string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.qs {
		if b != "" && b == q {
			return true
		}
	}
	return false
}

// multiRowSQL returns the family of single, a one-row INSERT whose values
// are ?1 (the run) and the per parameters after it, for 2..max rows that
// share ?1.
func multiRowSQL(single string, per, max int) *rowsSQL {
	return &rowsSQL{max: max, build: func(n int) string {
		var one strings.Builder
		one.WriteString("VALUES (?1")
		for c := range per {
			fmt.Fprintf(&one, ", ?%d", 2+c)
		}
		one.WriteString(")")
		head, tail, ok := strings.Cut(single, one.String())
		if !ok {
			panic("multiRowSQL: no " + one.String() + " in " + single)
		}
		var b strings.Builder
		b.WriteString(head)
		b.WriteString("VALUES ")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?1")
			for c := range per {
				fmt.Fprintf(&b, ", ?%d", 2+per*i+c)
			}
			b.WriteString(")")
		}
		b.WriteString(tail)
		return b.String()
	}}
}
