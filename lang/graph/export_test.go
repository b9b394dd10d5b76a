package graph

// The external tests reach these through the names below.

type FastSplit = fastSplit

var DecodeFastSplit = decodeFastSplit
var DecodeReference = decodeReference
var EncMarshal = encMarshal
var NewTypeInterner = newTypeInterner

var DecodeFast = decodeFast
var DecodeFastOnce = decodeFastOnce
var DecodeSplit = decodeSplit
var DefaultFastSplit = defaultFastSplit
var EncNormalize = encNormalize
var FastCuts = fastCuts
var IrExpr = irExpr
var IrFull = irFull
var IrLit = irLit
var IrSet = irSet
var IrShip = irShip
var IrStep = irStep
var IrText = irText
var IrTmpl = irTmpl

// EncFast returns the encodings of g and of each step's definition by the
// generated encoder (appendJSON, appendDefJSON), without falling back to
// encoding/json: what the tests compare with EncMarshal byte for byte.
func EncFast(g *Graph) ([]byte, [][]byte, error) {
	b, err := g.appendJSON(nil)
	if err != nil {
		return nil, nil, err
	}
	var defs [][]byte
	for _, s := range g.Steps {
		if s == nil {
			defs = append(defs, nil)
			continue
		}
		d, err := s.appendDefJSON(nil)
		if err != nil {
			return nil, nil, err
		}
		defs = append(defs, d)
	}
	return b, defs, nil
}

// StepDefOf is the view of a step the step hash encodes.
func StepDefOf(s *Step) any { return stepDefOf(s) }

var FastCanonicalOrder = fastCanonicalOrder
var EncTopoOrder = encTopoOrder

var EncSizeHint = encSizeHint
