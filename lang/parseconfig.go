package lang

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Parsing a large file in parallel.
//
// hclsyntax parses a file on one goroutine, and for a workflow of a
// thousand steps that is a third of the compile. parseConfig cuts such a
// file into pieces that hclsyntax parses side by side: the blocks nested
// one level deep (the steps of a workflow), taken in runs, and the rest of
// the file (the shell), in which the runs are commented out. Each piece is
// parsed at its own position in the file, so every range is the one a
// parse of the whole file gives, and the runs' blocks are then put back
// into the shell's bodies in source order.
//
// The cut is made only where it cannot change the result: the file has no
// heredoc, block comment or interpolation sequence (where a line can start
// inside a string), and a run starts and ends at a line boundary, at brace
// depth one outside brackets and parentheses, and parses to blocks only.
// When anything in any piece is reported, or the file is small, the whole
// file is parsed again in one piece, so that diagnostics are always those
// of hclsyntax.ParseConfig. Each piece, the shell and a file parsed whole
// go to the quick parser first (parsequick.go), and to hclsyntax only
// when it declines.

// Below parallelParseMin bytes or parallelParseBlocks nested blocks a file
// is parsed in one piece. Variables for the tests.
var (
	parallelParseMin    = 32 << 10
	parallelParseBlocks = 64
)

// maxChunkBlocks is the most blocks of one piece of a file parsed in
// pieces.
const maxChunkBlocks = 128

// parseConfig parses src as hclsyntax.ParseConfig(src, filename,
// hcl.InitialPos) does.
func parseConfig(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	f, _, diags := parseConfigDecoding(src, filename, false)
	return f, diags
}

// parseConfigDecoding is parseConfig that, with decode, also decodes the
// step blocks of a file parsed in pieces as they are parsed, and empties
// their bodies (predecode.go): the file must then be decoded with the
// predecoded steps it returns (nil when there are none).
func parseConfigDecoding(src []byte, filename string, decode bool) (*hcl.File, *predecoded, hcl.Diagnostics) {
	pieces := runtime.GOMAXPROCS(0)
	if pieces < 2 || len(src) < parallelParseMin {
		f, diags := parseWhole(src, filename)
		return f, nil, diags
	}
	if f, pre, ok := parseConfigSplit(src, filename, pieces, decode); ok {
		return f, pre, nil
	}
	f, diags := parseWhole(src, filename)
	return f, nil, diags
}

// parseWhole parses src in one piece, with the quick parser where it takes
// the text (parsequick.go), else with hclsyntax.
func parseWhole(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if f, ok := quickParseFile(src, filename); ok {
		if quickParsed != nil {
			quickParsed(false)
		}
		return f, nil
	}
	return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
}

// quickParsed, when set (by tests), is called each time the quick parser
// takes a whole file or shell (piece false) or a piece of a file.
var quickParsed func(piece bool)

// span is a byte range [start, end) of the source that starts at a line
// start; line is its 1-based line number.
type span struct {
	start, end, line int
}

// nestedBlocks finds the blocks nested one level deep, as runs of adjacent
// blocks (separated by blank and comment lines only). ok is false when the
// file holds text after which a line may start inside a string or comment.
func nestedBlocks(src []byte) (runs [][]span, ok bool) {
	if bytes.Contains(src, []byte("<<")) || bytes.Contains(src, []byte("/*")) ||
		bytes.Contains(src, []byte("${")) || bytes.Contains(src, []byte("%{")) {
		return nil, false
	}
	var (
		braces, brackets int
		line             = 1
		cur              []span
		open             = -1 // index in cur of the block being scanned
		adjacent         bool // the last item at depth one was a block
	)
	endRun := func() {
		if len(cur) > 0 {
			runs = append(runs, cur)
		}
		cur = nil
	}
	i := 0
	for i < len(src) {
		// At a line start: the lexical state is plain code.
		lineStart := i
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		blank := j == len(src) || src[j] == '\n' || src[j] == '\r' || src[j] == '#' ||
			(src[j] == '/' && j+1 < len(src) && src[j+1] == '/')
		if braces == 1 && brackets == 0 && open < 0 && !blank {
			if blockHeader(src[j:]) {
				if !adjacent {
					endRun()
				}
				cur = append(cur, span{start: lineStart, line: line})
				open = len(cur) - 1
			} else {
				adjacent = false
			}
		}
		// Scan the rest of the line.
		for i = j; i < len(src) && src[i] != '\n'; i++ {
			switch c := src[i]; c {
			case '"':
				for i++; i < len(src) && src[i] != '"'; i++ {
					switch src[i] {
					case '\\':
						i++
					case '\n':
						return nil, false
					}
				}
				if i >= len(src) {
					return nil, false
				}
			case '#':
				for i < len(src) && src[i] != '\n' {
					i++
				}
				i--
			case '/':
				if i+1 < len(src) && src[i+1] == '/' {
					for i < len(src) && src[i] != '\n' {
						i++
					}
					i--
				}
			case '{':
				braces++
			case '}':
				braces--
			case '[', '(':
				brackets++
			case ']', ')':
				brackets--
			}
			if braces < 0 || brackets < 0 || (open >= 0 && braces < 1) {
				return nil, false
			}
		}
		if i < len(src) {
			i++ // the newline
		}
		line++
		if open >= 0 && braces == 1 {
			if brackets != 0 {
				return nil, false
			}
			cur[open].end = i
			open = -1
			adjacent = true
		}
		if braces == 0 {
			endRun()
			adjacent = false
		}
	}
	if open >= 0 || braces != 0 || brackets != 0 {
		return nil, false
	}
	endRun()
	return runs, true
}

// blockHeader reports whether a line (from its first non-blank character)
// starts a block: an identifier followed by labels and an opening brace,
// not by an equals sign.
func blockHeader(line []byte) bool {
	if len(line) == 0 || !(line[0] == '_' || line[0] >= 'a' && line[0] <= 'z' || line[0] >= 'A' && line[0] <= 'Z') {
		return false
	}
	k := 1
	for k < len(line) && (line[k] == '_' || line[k] == '-' || line[k] >= 'a' && line[k] <= 'z' ||
		line[k] >= 'A' && line[k] <= 'Z' || line[k] >= '0' && line[k] <= '9') {
		k++
	}
	for k < len(line) && line[k] != '\n' {
		switch line[k] {
		case '=':
			return false
		case '{':
			return true
		}
		k++
	}
	return false
}

// parseConfigSplit parses src in pieces (see above); ok is false when the
// file cannot be cut or a piece reported anything. With decode, each
// piece's step blocks are decoded as soon as it is parsed (predecode.go).
func parseConfigSplit(src []byte, filename string, pieces int, decode bool) (*hcl.File, *predecoded, bool) {
	runs, ok := nestedBlocks(src)
	if !ok {
		return nil, nil, false
	}
	n := 0
	for _, r := range runs {
		n += len(r)
	}
	if n < parallelParseBlocks {
		return nil, nil, false
	}
	// Cut the runs into chunks of about n/(4*pieces) blocks: four per
	// goroutine, so that one slowed down holds the others up less; and of
	// at most maxChunkBlocks, so that the pieces being parsed (and, with
	// decode, their syntax trees) are a small part of a long file.
	per := min((n+4*pieces-1)/(4*pieces), maxChunkBlocks)
	var chunks []span
	for _, r := range runs {
		for k := 0; k < len(r); k += per {
			last := min(k+per, len(r)) - 1
			chunks = append(chunks, span{start: r[k].start, end: r[last].end, line: r[k].line})
		}
	}
	// The shell holds each chunk's text as one block comment of the same
	// size and lines, "/* ... */" before the chunk's last newline: a
	// comment is one token, where blanks would still be a newline token
	// per line.
	shell := bytes.Clone(src)
	for _, c := range chunks {
		for k := c.start; k < c.end; k++ {
			if shell[k] != '\n' {
				shell[k] = ' '
			}
		}
		if c.end-c.start >= 5 && shell[c.start+1] == ' ' && shell[c.end-3] == ' ' && shell[c.end-2] == ' ' && c.start+1 < c.end-3 {
			copy(shell[c.start:], "/*")
			copy(shell[c.end-3:], "*/")
		}
	}
	type result struct {
		blocks hclsyntax.Blocks
		steps  []*preStep
		ok     bool
	}
	results := make([]result, len(chunks))
	parse := func(k int) {
		c := chunks[k]
		pos := hcl.Pos{Line: c.line, Column: 1, Byte: c.start}
		body, ok := quickParseBody(src[c.start:c.end], filename, pos)
		if ok && quickParsed != nil {
			quickParsed(true)
		}
		if !ok {
			f, diags := hclsyntax.ParseConfig(src[c.start:c.end], filename, pos)
			b, isBody := f.Body.(*hclsyntax.Body)
			if len(diags) > 0 || !isBody {
				return
			}
			body = b
		}
		if len(body.Attributes) > 0 {
			return
		}
		results[k] = result{blocks: body.Blocks, ok: true}
		if decode {
			results[k].steps = predecodeSteps(body.Blocks, filename)
		}
	}
	// Task 0 is the shell, task k the chunk k-1; each goroutine takes the
	// next task until none is left, and all end before the merge.
	var file *hcl.File
	var shellDiags hcl.Diagnostics
	var next atomic.Int64
	work := func() {
		for {
			k := int(next.Add(1)) - 1
			switch {
			case k == 0:
				file, shellDiags = parseWhole(shell, filename)
			case k <= len(chunks):
				parse(k - 1)
			default:
				return
			}
		}
	}
	var wg sync.WaitGroup
	for range min(pieces, len(chunks)+1) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	root, isBody := file.Body.(*hclsyntax.Body)
	if len(shellDiags) > 0 || !isBody {
		return nil, nil, false
	}
	// Put each chunk's blocks into the top-level block that holds it: the
	// chunks are in source order, so each block's chunks are appended in
	// turn and merged with its own blocks once.
	var pre *predecoded
	var bodies []*hclsyntax.Body
	pending := map[*hclsyntax.Body]hclsyntax.Blocks{}
	for k, c := range chunks {
		if !results[k].ok {
			return nil, nil, false
		}
		var into *hclsyntax.Body
		for _, b := range root.Blocks {
			if b.Body.SrcRange.Start.Byte < c.start && c.end <= b.Body.SrcRange.End.Byte {
				into = b.Body
				break
			}
		}
		if into == nil {
			return nil, nil, false
		}
		if _, seen := pending[into]; !seen {
			bodies = append(bodies, into)
		}
		pending[into] = append(pending[into], results[k].blocks...)
		for _, st := range results[k].steps {
			if pre == nil {
				pre = &predecoded{byStart: make(map[int]*preStep, n)}
			}
			pre.byStart[st.start] = st
		}
	}
	for _, into := range bodies {
		into.Blocks = mergeBlocks(into.Blocks, pending[into])
	}
	file.Bytes = src
	return file, pre, true
}

// mergeBlocks merges two lists of blocks, each in source order, into one
// in source order.
func mergeBlocks(a, b hclsyntax.Blocks) hclsyntax.Blocks {
	out := make(hclsyntax.Blocks, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].TypeRange.Start.Byte < b[0].TypeRange.Start.Byte {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}
