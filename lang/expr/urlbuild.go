package expr

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The URL of an http action (language.md §8.4, "Building the URL").
//
// An http url is built from its template so that no value can change the
// URL's structure. The template's literal text (and a leading base value
// or a url.raw(...) value, which are placed as they are) fixes where the
// scheme, the authority, the path, the query and the fragment are; every
// other {{ }} value is escaped for the part it lands in:
//
//   - in the path: as one path segment (url.PathEscape: "/" "?" "#" and
//     "%" are escaped, so "../../admin" stays inside its segment);
//   - in the query: as a query key or value (url.QueryEscape: "&" "=" "+"
//     "#" are escaped, a space becomes "+");
//   - in the fragment: as net/url escapes a fragment ("#", a space and "%"
//     are escaped);
//   - in the user information (before an "@" of the authority): as net/url
//     escapes a user name or password;
//   - in the host or port: placed as is, but a value holding "/" "?" "#"
//     "@" "\" "%" a space or a control character is refused (net/url
//     would decode a "%" escape into another host);
//   - before the scheme's "://": refused (the scheme is the template's
//     literal text, or comes from a leading base value).
//
// Raw text in the path, the query or the fragment has the bytes that
// cannot stand there percent-encoded (writeRaw), as net/url would send
// them.
//
// An escaped value never holds the delimiter that ends its part, so where
// each value lands is decided by the raw text alone: the pieces are laid
// out first with every escaped value empty (the skeleton), and each value
// takes the part its place in the skeleton falls in.

// URLPiece is one piece of an http url: raw text, or a value to escape for
// the part of the URL it lands in.
type URLPiece struct {
	Text   string
	Escape bool   // escape Text for where it lands; false: raw text
	Expr   string // the expression that made the value, for messages
}

// URLError is a URL that cannot be built or is not an http or https URL.
// Its message never quotes the URL or a value: either may hold a secret.
type URLError struct {
	Msg   string
	Parse error // url.Parse's error, when that is what is wrong (it may quote the URL)
}

func (e *URLError) Error() string { return e.Msg }

func (e *URLError) Unwrap() error { return e.Parse }

// MaxRedirects is how many redirects an http action follows (language.md
// §8.4); the next one fails the attempt.
const MaxRedirects = 10

// url parts, in order.
const (
	partScheme = iota
	partUser
	partHost
	partPath
	partQuery
	partFragment
)

// urlLayout is where the parts of a URL (or a skeleton) start: auth is the
// first byte after "://" (-1: the text is not scheme://...), at the last
// "@" of the authority (-1: none), path, query and frag the index of the
// "/", "?" and "#" that start those parts (when a part is absent, the
// start of the next one, or len(s)).
type urlLayout struct {
	Auth, at, path, query, frag int
}

func LayoutOf(s string) urlLayout {
	l := urlLayout{Auth: -1, at: -1, path: len(s), query: len(s), frag: len(s)}
	i := strings.Index(s, "://")
	if i <= 0 || !validScheme(s[:i]) {
		return l
	}
	l.Auth = i + 3
	if j := strings.IndexAny(s[l.Auth:], "/?#"); j >= 0 {
		l.path = l.Auth + j
	}
	if j := strings.LastIndexByte(s[l.Auth:l.path], '@'); j >= 0 {
		l.at = l.Auth + j
	}
	if j := strings.IndexByte(s[l.path:], '#'); j >= 0 {
		l.frag = l.path + j
	}
	l.query = l.frag
	if j := strings.IndexByte(s[l.path:l.frag], '?'); j >= 0 {
		l.query = l.path + j
	}
	return l
}

// validScheme reports whether s is a URL scheme: a letter, then letters,
// digits, "+", "-" and ".".
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// partAt returns the part of the URL a value placed at offset o of the
// skeleton lands in: the part of the byte before it (a delimiter belongs
// to the part it starts), the authority right after "://".
func (l urlLayout) partAt(o int) int {
	switch {
	case l.Auth < 0 || o < l.Auth:
		return partScheme
	case o <= l.path:
		if l.at >= 0 && o <= l.at {
			return partUser
		}
		return partHost
	case o <= l.query:
		return partPath
	case o <= l.frag:
		return partQuery
	}
	return partFragment
}

// BuildURL joins the pieces, each escaped value escaped for the part of
// the URL it lands in, and checks that the result is an absolute http or
// https URL with a host (CheckHTTPURL). When only that check fails, the
// built URL is returned with its error.
func BuildURL(pieces []URLPiece) (string, error) {
	var skel strings.Builder
	offsets := make([]int, len(pieces))
	for i, p := range pieces {
		offsets[i] = skel.Len()
		if !p.Escape {
			skel.WriteString(p.Text)
		}
	}
	l := LayoutOf(skel.String())
	var b strings.Builder
	for i, p := range pieces {
		if !p.Escape {
			l.writeRaw(&b, p.Text, offsets[i])
			continue
		}
		s, err := escapeURLValue(p.Text, l.partAt(offsets[i]))
		if err != nil {
			return "", &URLError{Msg: fmt.Sprintf("the value of {{ %s }} %v", p.Expr, err)}
		}
		b.WriteString(s)
	}
	out := b.String()
	return out, CheckHTTPURL(out)
}

// partOf returns the part of the URL the skeleton's byte at k is in.
func (l urlLayout) partOf(k int) int {
	switch {
	case l.Auth < 0 || k < l.Auth:
		return partScheme
	case k < l.path:
		return partHost
	case k < l.query:
		return partPath
	case k < l.frag:
		return partQuery
	}
	return partFragment
}

// writeRaw writes raw text that stands at offset off of the skeleton,
// percent-encoding in the path, the query and the fragment the bytes that
// cannot stand in a URL there: controls, space, non-ASCII bytes and
// " < > \ ^ ` { | }. net/url would re-encode a whole path holding one
// of them from its decoded form, turning a value's %2F back into a "/"
// (found by FuzzBuildURL); a query holding one would go into the request
// line as it is.
func (l urlLayout) writeRaw(b *strings.Builder, s string, off int) {
	for k := 0; k < len(s); k++ {
		c := s[k]
		if unsafeURLByte(c) && l.partOf(off+k) >= partPath {
			fmt.Fprintf(b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
}

func unsafeURLByte(c byte) bool {
	return c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>\^`+"`{|}", c) >= 0
}

// escapeURLValue escapes v for the URL part it lands in.
func escapeURLValue(v string, part int) (string, error) {
	switch part {
	case partScheme:
		return "", errors.New("would be part of the url's scheme: write the scheme and :// as text before any {{ }}, or make the whole start of the url one value, like {{ input.base }}/path")
	case partUser:
		u := (&url.URL{User: url.User(v)}).String()
		return strings.TrimSuffix(strings.TrimPrefix(u, "//"), "@"), nil
	case partHost:
		if i := strings.IndexFunc(v, func(r rune) bool {
			return r <= ' ' || r == 0x7f || strings.ContainsRune(`/?#@\%`, r)
		}); i >= 0 {
			return "", errors.New("cannot be in the url's host: it holds a space, a control character or one of / ? # @ \\ % (a value in the host or port is placed as it is, so it must not change where the host ends or be decoded into another host)")
		}
		return v, nil
	case partPath:
		if v == "." || v == ".." {
			// Escaping does not help: a server decodes %2E%2E and walks
			// up the path all the same.
			return "", fmt.Errorf("%q cannot be in the url's path: a . or .. segment would send the request to another path", v)
		}
		return url.PathEscape(v), nil
	case partQuery:
		return url.QueryEscape(v), nil
	}
	return (&url.URL{Fragment: v}).EscapedFragment(), nil
}

// CheckHTTPURL checks that s is an absolute http or https URL with a host.
// Its errors do not quote s.
func CheckHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return &URLError{Msg: "it is not a valid URL: " + URLParseProblem(err), Parse: err}
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return &URLError{Msg: "it is not an absolute URL: it must start with http:// or https://"}
	default:
		// Not quoted: a base value's scheme is the start of the value,
		// which may be a secret.
		return &URLError{Msg: "its scheme is not http or https: it must start with http:// or https://"}
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return &URLError{Msg: "it has no host: write it as http://HOST/PATH"}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return &URLError{Msg: "its port is not a number from 1 to 65535"}
		}
	}
	return nil
}

// URLParseProblem says what url.Parse (or url.ParseRequestURI) found
// wrong without quoting any of the URL, which may hold a secret: the
// compiler's URL check and the http action's request building share it.
func URLParseProblem(err error) string {
	var escErr url.EscapeError
	var hostErr url.InvalidHostError
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.As(err, &escErr):
		return "invalid URL escape"
	case errors.As(err, &hostErr):
		return "invalid character in host name"
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "invalid port "):
		return "invalid port after host"
	case strings.HasPrefix(msg, "invalid host: "):
		return "invalid host"
	}
	switch msg { // url.Parse's messages that quote nothing
	case "missing protocol scheme", "net/url: invalid control character in URL", "empty url",
		"invalid URI for request", "first path segment in URL cannot contain colon",
		"net/url: invalid userinfo", "invalid IP-literal", "missing ']' in host":
		return msg
	}
	return "not a valid URL"
}

// AppendQuery adds the parameters to the query of the URL s (before its
// fragment), keys sorted, each key and value query-escaped.
func AppendQuery(s string, params map[string]string) string {
	if len(params) == 0 {
		return s
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var q strings.Builder
	for _, k := range keys {
		if q.Len() > 0 {
			q.WriteByte('&')
		}
		q.WriteString(url.QueryEscape(k))
		q.WriteByte('=')
		q.WriteString(url.QueryEscape(params[k]))
	}
	frag := ""
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, frag = s[:i], s[i:]
	}
	switch {
	case !strings.Contains(s, "?"):
		s += "?"
	case !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "&"):
		s += "&"
	}
	return s + q.String() + frag
}
