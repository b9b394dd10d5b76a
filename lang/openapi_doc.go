package lang

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/lang/naming"
	"github.com/getkin/kin-openapi/openapi3"
)

// This file reads the OpenAPI documents openapi actions name (language.md
// §8.10): a local file beside the workflow file, read once per load,
// parsed and validated with kin-openapi, its operations indexed by
// operationId.

// MaxOpenAPIDocument is the most bytes flowrun reads of an OpenAPI
// document; a larger one is refused.
const MaxOpenAPIDocument = 4 << 20

// openapiDoc is a document read and indexed, or the reason it cannot be
// used.
type openapiDoc struct {
	doc    *openapi3.T
	sha256 string
	ops    map[string]*openapiOp // by operationId
	opIDs  []string              // sorted
	err    string                // why the document cannot be used ("" when it can)
	errSum string                // the diagnostic's summary with err
}

// openapiOp is one operation of a document.
type openapiOp struct {
	method string // upper case
	path   string // the path template, like /pets/{petId}
	item   *openapi3.PathItem
	op     *openapi3.Operation
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
}

func newDocCache(refuse string, shared *DocumentCache) *docCache {
	return &docCache{docs: map[string]*openapiDoc{}, refuse: refuse, shared: shared}
}

// DocumentCache keeps the OpenAPI documents that several loads read (a
// language server compiles a file again at every edit): a document is read
// and validated again only when its size or modification time changed.
// It holds at most maxCachedDocuments documents. Safe for concurrent use.
type DocumentCache struct {
	mu   sync.Mutex
	docs map[string]cachedDoc
}

// maxCachedDocuments bounds a DocumentCache.
const maxCachedDocuments = 32

type cachedDoc struct {
	size int64
	mod  time.Time
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

// load returns the document rel names, relative to the directory of the
// workflow file wfFile.
func (dc *docCache) load(wfFile, rel string) *openapiDoc {
	if dc.refuse != "" {
		return &openapiDoc{errSum: "OpenAPI document not available", err: dc.refuse}
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

// resolveDocPath resolves a document path against the workflow file's
// directory: a relative path that stays inside that directory, symbolic
// links followed. bad says why it is refused.
func resolveDocPath(wfFile, rel string) (path, bad string) {
	switch {
	case rel == "":
		return "", "document names the OpenAPI document's file, like document = \"petstore.yaml\" (relative to the workflow file's directory)."
	case strings.Contains(rel, "://"):
		return "", fmt.Sprintf("%q is a URL; flowrun reads only local OpenAPI documents yet. Save a copy beside the workflow file and name it, like document = \"petstore.yaml\".", rel)
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
	sum := sha256.Sum256(src)
	d := &openapiDoc{sha256: hex.EncodeToString(sum[:]), ops: map[string]*openapiOp{}}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false // a document is one file: nothing else is read
	doc, err := loader.LoadFromData(src)
	if err == nil {
		err = doc.Validate(context.Background())
	}
	if err != nil {
		d.errSum, d.err = "Invalid OpenAPI document", fmt.Sprintf("%s is not a valid OpenAPI 3 document: %s. Fix the document, or use a copy that validates.", rel, oneLine(err.Error()))
		return d
	}
	d.doc = doc
	if doc.Paths != nil {
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				if op == nil || op.OperationID == "" {
					continue
				}
				d.ops[op.OperationID] = &openapiOp{method: strings.ToUpper(method), path: path, item: item, op: op}
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

// OpenAPIOperations lists the operationIds of the OpenAPI document rel
// names beside the workflow file wfFile, sorted; nil when it cannot be
// read or is not valid. For the language server's completion; cache may
// be nil.
func OpenAPIOperations(wfFile, rel string, cache *DocumentCache) []string {
	d := newDocCache("", cache).load(wfFile, rel)
	if d.err != "" {
		return nil
	}
	return d.opIDs
}
