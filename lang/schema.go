package lang

import "github.com/hashicorp/hcl/v2"

// BlockSchema is what a block of a workflow file accepts: the names of its
// attributes and of the blocks that may stand in it, for tools (the
// language server completes and documents them). It is read from the
// schemas the decoder uses, so it cannot drift from what compiles.
type BlockSchema struct {
	// Attributes are the attribute names the block accepts.
	Attributes []string
	// Required are the attributes that must be written.
	Required []string
	// Blocks are the block types that may stand inside, with the number
	// of labels each takes.
	Blocks []BlockType
	// Free: any attribute name is accepted (a set action's output fields).
	Free bool
}

// BlockType is a block that may stand inside another one.
type BlockType struct {
	Type   string
	Labels int
}

// SchemaOf returns the schema of the block reached by the block types in
// path, outermost first: nil is the file's top level, ["workflow"] the
// workflow block, ["workflow", "step", "retry"] a step's retry block. ok
// is false for a path that no valid file holds.
func SchemaOf(path []string) (BlockSchema, bool) {
	s, free, ok := schemaAt(path)
	if !ok {
		return BlockSchema{}, false
	}
	out := BlockSchema{Free: free}
	if s == nil {
		return out, true
	}
	for _, a := range s.Attributes {
		out.Attributes = append(out.Attributes, a.Name)
		if a.Required {
			out.Required = append(out.Required, a.Name)
		}
	}
	for _, b := range s.Blocks {
		out.Blocks = append(out.Blocks, BlockType{Type: b.Type, Labels: len(b.LabelNames)})
	}
	return out, true
}

// schemaAt walks the decoder's schemas along path.
func schemaAt(path []string) (s *hcl.BodySchema, free, ok bool) {
	s = fileSchema
	for i, t := range path {
		var parent string
		if i > 0 {
			parent = path[i-1]
		}
		if !hasBlock(s, t) {
			return nil, false, false
		}
		switch {
		case t == "workflow" && i == 0:
			s = workflowSchema
		case t == "input":
			s = inputSchema
		case t == "secret":
			s = secretSchema
		case t == "concurrency":
			s = concurrencySchema
		case t == "defaults":
			s = defaultsSchema
		case t == "breaker":
			s = breakerSchema
		case t == "limits":
			s = limitsSchema
		case t == "step":
			s = stepSchema
		case t == "output":
			s = outputSchema
		case t == "alert":
			s = alertSchema
		case t == "schedule":
			s = scheduleSchema
		case t == "webhook":
			s = webhookSchema
		case t == "retry":
			s = retrySchema
		case t == "foreach":
			s = foreachSchema
		case t == "case" && parent == "switch":
			s = caseSchema
		case t == "catch" && parent == "step":
			s = catchSchema
		case t == "compensate" && parent == "step":
			s = compensateSchema
		case t == "auth" && parent == "http":
			s = authSchema
		case t == "basic" && parent == "auth":
			s = basicSchema
		default:
			as, isFree := actionSchema(t)
			if as == nil && !isFree {
				return nil, false, false
			}
			if isFree {
				if i != len(path)-1 {
					return nil, false, false
				}
				return nil, true, true
			}
			s = as
		}
	}
	return s, false, true
}

// actionSchema is the schema of an action block; a set block takes any
// attribute (free).
func actionSchema(t string) (s *hcl.BodySchema, free bool) {
	switch t {
	case "exec":
		return execSchema, false
	case "http":
		return httpSchema, false
	case "sleep":
		return sleepSchema, false
	case "wait":
		return waitSchema, false
	case "workflow":
		return childSchema, false
	case "fail":
		return failSchema, false
	case "switch":
		return switchSchema, false
	case kindOpenAPI:
		return openapiSchema, false
	case kindEmit:
		return emitSchema, false
	case "set":
		return nil, true
	}
	return nil, false
}

func hasBlock(s *hcl.BodySchema, t string) bool {
	if s == nil {
		return false
	}
	for _, b := range s.Blocks {
		if b.Type == t {
			return true
		}
	}
	return false
}
