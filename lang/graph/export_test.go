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
