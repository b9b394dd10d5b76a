package lang

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/lang/openapi"
)

// This file reads the OpenAPI documents openapi actions name (language.md
// §8.10): a local file beside the workflow file, or an http or https URL
// fetched through the load's DocumentFetcher (lang itself opens no network
// connection), each read once per load, parsed and validated by package
// lang/openapi, its operations indexed by operationId.

// MaxOpenAPIDocument is the most bytes flowrun reads of an OpenAPI
// document, a file or a URL's; a larger one is refused.
const MaxOpenAPIDocument = 4 << 20

// DocumentFetcher fetches the OpenAPI document an openapi action names by
// URL (LoadOptions.FetchDocument): url is an absolute http or https URL
// without credentials, exactly as the workflow wrote it. It returns the
// document's bytes; a *FileTooLargeError when it holds more than limit
// bytes; or an error that says why it could not be fetched (the server's
// status, a timeout), worded to follow "fetching URL failed: ". A load
// calls it at most once per distinct URL, never twice at once.
type DocumentFetcher func(url string, limit int64) ([]byte, error)

// openapiDoc is a document read and indexed, or the reason it cannot be
// used.
type openapiDoc struct {
	doc    *openapi.Document
	sha256 string
	ops    map[string]*openapiOp // by operationId
	opIDs  []string              // sorted
	err    string                // why the document cannot be used ("" when it can)
	errSum string                // the diagnostic's summary with err
	// base is the URL a document fetched by URL was served at, which a
	// relative server URL of the document is resolved against; nil for a
	// file.
	base *url.URL
}

// openapiOp is one operation of a document.
type openapiOp struct {
	method string // upper case
	path   string // the path template, like /pets/{petId}
	item   *openapi.PathItem
	op     *openapi.Operation
}

// docCache holds the documents of one load by their resolved path: a
// document several steps name is read and validated once.
type docCache struct {
	mu   sync.Mutex
	docs map[string]*openapiDoc
	// refuse, when set, is why no document may be read (a load of sources
	// that did not come from this machine's files).
	refuse string
	// shared, when set, keeps the documents across loads.
	shared *DocumentCache
	// fetch fetches a document named by URL; nil: such a document is an
	// error.
	fetch DocumentFetcher
}

func newDocCache(refuse string, shared *DocumentCache, fetch DocumentFetcher) *docCache {
	return &docCache{docs: map[string]*openapiDoc{}, refuse: refuse, shared: shared, fetch: fetch}
}

// DocumentCache keeps the OpenAPI documents that several loads read (a
// language server compiles a file again at every edit): a file is read and
// validated again only when its size or modification time changed, and a
// document fetched by URL is validated again only when its bytes changed
// (fetching it again is the fetcher's business). It holds at most
// maxCachedDocuments documents. Safe for concurrent use.
type DocumentCache struct {
	mu   sync.Mutex
	docs map[string]cachedDoc
}

// maxCachedDocuments bounds a DocumentCache.
const maxCachedDocuments = 32

type cachedDoc struct {
	size int64
	mod  time.Time
	sum  string // the bytes' SHA-256, for a document fetched by URL
	doc  *openapiDoc
}

// NewDocumentCache returns an empty cache, for LoadOptions.Documents.
func NewDocumentCache() *DocumentCache { return &DocumentCache{docs: map[string]cachedDoc{}} }

// read returns the document at path, from the cache when the file's size
// and modification time are what they were.
func (dc *DocumentCache) read(path, rel string) *openapiDoc {
	info, err := os.Stat(path)
	if err != nil {
		return readOpenAPIDoc(path, rel)
	}
	dc.mu.Lock()
	c, ok := dc.docs[path]
	dc.mu.Unlock()
	if ok && c.size == info.Size() && c.mod.Equal(info.ModTime()) {
		return c.doc
	}
	d := readOpenAPIDoc(path, rel)
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if len(dc.docs) >= maxCachedDocuments {
		clear(dc.docs)
	}
	dc.docs[path] = cachedDoc{size: info.Size(), mod: info.ModTime(), doc: d}
	return d
}

// parsed returns the document fetched from raw (parsed: u) with bytes
// src, from the cache when the same bytes were fetched from raw before.
func (dc *DocumentCache) parsed(raw string, u *url.URL, src []byte) *openapiDoc {
	key := raw
	sum := sha256.Sum256(src)
	hexSum := hex.EncodeToString(sum[:])
	dc.mu.Lock()
	c, ok := dc.docs[key]
	dc.mu.Unlock()
	if ok && c.sum == hexSum {
		return c.doc
	}
	d := parseOpenAPIDoc(src, raw, u)
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if len(dc.docs) >= maxCachedDocuments {
		clear(dc.docs)
	}
	dc.docs[key] = cachedDoc{sum: hexSum, doc: d}
	return d
}

// load returns the document rel names: a URL, or a path relative to the
// directory of the workflow file wfFile.
func (dc *docCache) load(wfFile, rel string) *openapiDoc {
	if dc.refuse != "" {
		return &openapiDoc{errSum: "OpenAPI document not available", err: dc.refuse}
	}
	if isDocURL(rel) {
		return dc.loadURL(rel)
	}
	path, bad := resolveDocPath(wfFile, rel)
	if bad != "" {
		return &openapiDoc{errSum: "Invalid OpenAPI document path", err: bad}
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if d := dc.docs[path]; d != nil {
		return d
	}
	var d *openapiDoc
	if dc.shared != nil {
		d = dc.shared.read(path, rel)
	} else {
		d = readOpenAPIDoc(path, rel)
	}
	dc.docs[path] = d
	return d
}

// isDocURL reports whether a document attribute names a URL rather than
// a file: it has a scheme followed by "://".
func isDocURL(doc string) bool { return strings.Contains(doc, "://") }

// loadURL returns the document at the URL raw, fetched once per load.
func (dc *docCache) loadURL(raw string) *openapiDoc {
	u, bad := checkDocURL(raw)
	if bad != "" {
		return &openapiDoc{errSum: "Invalid OpenAPI document URL", err: bad}
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if d := dc.docs[raw]; d != nil {
		return d
	}
	d := dc.fetchURL(raw, u)
	dc.docs[raw] = d
	return d
}

// fetchURL fetches, parses and validates the document at u (raw as the
// workflow wrote it).
func (dc *docCache) fetchURL(raw string, u *url.URL) *openapiDoc {
	const saveCopy = "save a copy of the document beside the workflow file and name it, like document = \"petstore.yaml\""
	if dc.fetch == nil {
		return &openapiDoc{errSum: "OpenAPI document not fetched", err: fmt.Sprintf(
			"%s is a URL, and this program compiles workflows without fetching documents. Compile the workflow with the flowrun command, or %s.", raw, saveCopy)}
	}
	src, err := dc.fetch(raw, MaxOpenAPIDocument)
	var big *FileTooLargeError
	switch {
	case errors.As(err, &big) || err == nil && int64(len(src)) > MaxOpenAPIDocument:
		return &openapiDoc{errSum: "OpenAPI document too large", err: fmt.Sprintf(
			"The document at %s is larger than %s, the most flowrun reads of an OpenAPI document. Serve a smaller document with the operations the workflow calls, or %s.", raw, SizeText(MaxOpenAPIDocument), saveCopy)}
	case err != nil:
		return &openapiDoc{errSum: "Cannot fetch OpenAPI document", err: fmt.Sprintf(
			"Fetching %s failed: %s. Check the URL and that its server answers it, or %s.", raw, strings.TrimSuffix(oneLine(err.Error()), "."), saveCopy)}
	}
	if dc.shared != nil {
		return dc.shared.parsed(raw, u, src)
	}
	return parseOpenAPIDoc(src, raw, u)
}

// checkDocURL parses a document URL: an absolute http or https URL with a
// host, no credentials and no template. bad says why it is refused.
func checkDocURL(raw string) (u *url.URL, bad string) {
	const fix = " Name the document by its http or https URL, like document = \"https://api.example.com/openapi.yaml\", or save a copy beside the workflow file and name it, like document = \"petstore.yaml\"."
	if strings.Contains(raw, "{{") {
		return nil, fmt.Sprintf("%q holds a template; document is a literal, read when the workflow is compiled, so it cannot use inputs or secrets.%s", raw, fix)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Sprintf("%q is not a valid URL (%s).%s", raw, unwrapURLErr(err), fix)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Sprintf("%q is a %s URL; flowrun fetches OpenAPI documents only over http and https.%s", raw, u.Scheme, fix)
	case u.Host == "":
		return nil, fmt.Sprintf("%q has no host.%s", raw, fix)
	case u.User != nil:
		return nil, fmt.Sprintf("%s carries credentials (user:password@): the document URL is kept in the compiled workflow and shown by graph, diff and show, so it must hold no secret. Fetch the document yourself and save a copy beside the workflow file, like document = \"petstore.yaml\".", u.Redacted())
	}
	return u, ""
}

// unwrapURLErr is the reason of a url.Parse error, without the URL it
// repeats.
func unwrapURLErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// resolveDocPath resolves a document path against the workflow file's
// directory: a relative path that stays inside that directory, symbolic
// links followed. bad says why it is refused.
func resolveDocPath(wfFile, rel string) (path, bad string) {
	switch {
	case rel == "":
		return "", "document names the OpenAPI document's file, like document = \"petstore.yaml\" (relative to the workflow file's directory), or its URL, like document = \"https://api.example.com/openapi.yaml\"."
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || filepath.VolumeName(rel) != "":
		return "", fmt.Sprintf("%q is an absolute path; a document is named relative to the workflow file's directory, so the workflow reads the same document wherever it is checked out. Copy the document beside the workflow file.", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Sprintf("%q leads out of the workflow file's directory; a document must be inside it (or a directory below it). Copy the document there.", rel)
	}
	dir := filepath.Dir(wfFile)
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Sprintf("the workflow file's directory %s cannot be read (%v).", dir, err)
	}
	full := filepath.Join(dir, clean)
	realFull, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", fmt.Sprintf("%s cannot be read (%v). Check the document's path, relative to the workflow file's directory.", full, unwrapPathErr(err))
	}
	if r, err := filepath.Rel(realDir, realFull); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Sprintf("%s is a symbolic link that leads out of the workflow file's directory; a document must be inside it. Copy the document there.", full)
	}
	return realFull, ""
}

func unwrapPathErr(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// readOpenAPIDoc reads, parses and validates the document at path (rel as
// the workflow wrote it, for messages).
func readOpenAPIDoc(path, rel string) *openapiDoc {
	src, err := ReadFileMax(path, MaxOpenAPIDocument)
	var big *FileTooLargeError
	switch {
	case errors.As(err, &big):
		return &openapiDoc{errSum: "OpenAPI document too large", err: fmt.Sprintf(
			"%s is larger than %s, the most flowrun reads of an OpenAPI document. Keep the operations the workflow calls in a smaller document.", rel, SizeText(MaxOpenAPIDocument))}
	case err != nil:
		return &openapiDoc{errSum: "Cannot read OpenAPI document", err: fmt.Sprintf("Reading %s failed: %v.", rel, unwrapPathErr(err))}
	}
	return parseOpenAPIDoc(src, rel, nil)
}

// parseOpenAPIDoc parses and validates a document's bytes (name is the
// file or URL, for messages; base the URL it was fetched from, nil for a
// file).
func parseOpenAPIDoc(src []byte, name string, base *url.URL) *openapiDoc {
	sum := sha256.Sum256(src)
	d := &openapiDoc{sha256: hex.EncodeToString(sum[:]), ops: map[string]*openapiOp{}, base: base}
	doc, err := openapi.Parse(src)
	if err != nil {
		d.errSum, d.err = "Invalid OpenAPI document", fmt.Sprintf("%s is not a valid OpenAPI 3 document: %s. Fix the document, or use a copy that validates.", name, oneLine(err.Error()))
		return d
	}
	d.doc = doc
	for _, p := range doc.Paths {
		for _, op := range p.Item.Operations {
			if op.OperationID != "" {
				d.ops[op.OperationID] = &openapiOp{method: op.Method, path: p.Template, item: p.Item, op: op}
			}
		}
	}
	for id := range d.ops {
		d.opIDs = append(d.opIDs, id)
	}
	sort.Strings(d.opIDs)
	return d
}

// oneLine keeps a message on one line, and short.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// nearestOps lists up to five operationIds closest to id, nearest first.
func nearestOps(id string, ids []string) []string {
	type cand struct {
		id string
		d  int
	}
	cands := make([]cand, 0, len(ids))
	low := strings.ToLower(id)
	for _, x := range ids {
		cands = append(cands, cand{x, naming.EditDistance(low, strings.ToLower(x))})
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].d < cands[j].d })
	var out []string
	for i := 0; i < len(cands) && i < 5; i++ {
		out = append(out, cands[i].id)
	}
	return out
}

// OpenAPIOperations lists the operationIds of the OpenAPI document doc
// names (a file beside the workflow file wfFile, or a URL fetched with
// fetch), sorted; nil when it cannot be read or is not valid. For the
// language server's completion; cache and fetch may be nil.
func OpenAPIOperations(wfFile, doc string, cache *DocumentCache, fetch DocumentFetcher) []string {
	d := newDocCache("", cache, fetch).load(wfFile, doc)
	if d.err != "" {
		return nil
	}
	return d.opIDs
}
