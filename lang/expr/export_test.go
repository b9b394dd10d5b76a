package expr

// The external tests reach these through the names below.

type Compiled = compiled
type LazyVars = lazyVars
type SizeEstimator = sizeEstimator

var Base = base
var BoundedBySize = boundedBySize
var CheckExprEnv = checkExprEnv
var CompileExpr = compileExpr
var CtActivation = ctActivation
var CtCheck = ctCheck
var CtFullGraph = ctFullGraph
var CtGraph = ctGraph
var CtStep = ctStep
var FastParse = fastParse
var FromCEL = fromCEL
var ScanStepRefs = scanStepRefs
