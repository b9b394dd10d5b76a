package lang

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// A parsed file's syntax tree is needed to decode it, and after that only
// to say which block a diagnostic is in (blockContext). A Module keeps,
// once the file is decoded, its bytes and an outline of its blocks instead
// of the tree: the tree of a long workflow is as large as the parse
// itself, and compiling the workflow would otherwise hold it to the end.

// outlineBody is the Body of a decoded file in Module.Files: it has no
// content, only the outline of the file's blocks.
type outlineBody struct {
	hcl.Body // empty
	blocks   []outlineBlock
}

// outlineBlock is one block of a file: its range, the end of its opening
// brace, its context ("step \"a\"", "" without labels) and its blocks.
type outlineBlock struct {
	start, end, open int // byte offsets
	context          string
	blocks           []outlineBlock
}

// outlined returns f with its syntax tree replaced by the outline of its
// blocks; f itself is left as it is.
func outlined(f *hcl.File) *hcl.File {
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return f
	}
	return &hcl.File{Bytes: f.Bytes, Body: &outlineBody{Body: hcl.EmptyBody(), blocks: outlineBlocks(body)}}
}

func outlineBlocks(body *hclsyntax.Body) []outlineBlock {
	if body == nil || len(body.Blocks) == 0 {
		return nil
	}
	out := make([]outlineBlock, len(body.Blocks))
	for i, b := range body.Blocks {
		r := b.Range()
		out[i] = outlineBlock{start: r.Start.Byte, end: r.End.Byte, open: b.OpenBraceRange.End.Byte,
			context: labelContext(b), blocks: outlineBlocks(b.Body)}
	}
	return out
}

// labelContext is how a diagnostic names a labelled block: its type and
// quoted labels; "" for a block without labels.
func labelContext(b *hclsyntax.Block) string {
	if len(b.Labels) == 0 {
		return ""
	}
	var s strings.Builder
	s.WriteString(b.Type)
	for _, l := range b.Labels {
		fmt.Fprintf(&s, " %q", l)
	}
	return s.String()
}

// context is blockContext over the outline: the innermost labelled block
// whose inside (after its opening brace) holds offset.
func (o *outlineBody) context(offset int) string {
	ctx := ""
	blocks := o.blocks
	for blocks != nil {
		var inner []outlineBlock
		for _, b := range blocks {
			if offset < b.start || offset >= b.end || offset < b.open {
				continue
			}
			if b.context != "" {
				ctx = b.context
			}
			inner = b.blocks
			break
		}
		blocks = inner
	}
	return ctx
}
