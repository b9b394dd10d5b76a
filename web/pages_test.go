package web

import (
	"strings"
	"testing"
)

// The sign-in page's command line names every scope a token can have.
func TestLoginNamesEveryScope(t *testing.T) {
	s := newSite(t)
	_, page := s.browser().get("/login")
	if !strings.Contains(page, "flowrun tokens create NAME --scope read|write|deploy|admin") {
		t.Fatalf("the sign-in page does not name every scope:\n%s", page)
	}
}
