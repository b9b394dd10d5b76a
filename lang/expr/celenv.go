package expr

import (
	"fmt"
	"sync"
	"sync/atomic"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"

	celenv "cel.dev/cel-go/common/env"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
	"github.com/flowrun/flowrun/lang/graph"
)

// The CEL environment.
//
// One base environment holds the standard library and the deterministic
// extensions (strings, lists, math, sets, encoders: nothing that reads the
// clock, randomness or I/O). Each scope extends it with its variables (see
// scope.go).
//
// Numbers. Workflow authors write number (CEL double); the interpreter
// produces int where a count is meant (exit codes, statuses, attempts,
// indexes), and integer literals such as 1 are CEL ints. So that numbers
// work as users expect, the base environment changes standard CEL in three
// ways:
//
//   - + - * / accept an int on one side and a double on the other and
//     return a double (the int is converted): input.amount * 2, input.count + 1.
//     int with int stays int (integer division truncates: 7 / 2 == 3).
//   - < <= > >= compare ints and doubles (cel.CrossTypeNumericComparisons).
//   - == and != accept an int and a double (compared by value: 1 == 1.0),
//     and any value against null (steps.x.error == null); other operands
//     of different types are a compile error, as in standard CEL.
var (
	baseOnce sync.Once
	baseEnv  *cel.Env
	baseErr  error
)

// base returns the shared base environment.
func base() (*cel.Env, error) {
	baseOnce.Do(func() {
		baseEnv, baseErr = newBaseEnv()
		if baseErr != nil {
			baseErr = fmt.Errorf("building the CEL environment: %w", baseErr)
		}
	})
	return baseEnv, baseErr
}

// arithmetic operators whose standard definitions are replaced by ones that
// also accept int and double mixed.
var arithmetic = []struct {
	op        string
	overloads []arithOverload
	apply     func(l, r ref.Val) ref.Val
}{
	{operators.Add, []arithOverload{
		{overloads.AddBytes, types.BytesType, types.BytesType, types.BytesType},
		{overloads.AddDouble, types.DoubleType, types.DoubleType, types.DoubleType},
		{overloads.AddDurationDuration, types.DurationType, types.DurationType, types.DurationType},
		{overloads.AddDurationTimestamp, types.DurationType, types.TimestampType, types.TimestampType},
		{overloads.AddTimestampDuration, types.TimestampType, types.DurationType, types.TimestampType},
		{overloads.AddInt64, types.IntType, types.IntType, types.IntType},
		{overloads.AddList, listOfA, listOfA, listOfA},
		{overloads.AddString, types.StringType, types.StringType, types.StringType},
		{overloads.AddUint64, types.UintType, types.UintType, types.UintType},
		{"add_int64_double", types.IntType, types.DoubleType, types.DoubleType},
		{"add_double_int64", types.DoubleType, types.IntType, types.DoubleType},
	}, func(l, r ref.Val) ref.Val { return l.(traits.Adder).Add(r) }},
	{operators.Subtract, []arithOverload{
		{overloads.SubtractDouble, types.DoubleType, types.DoubleType, types.DoubleType},
		{overloads.SubtractDurationDuration, types.DurationType, types.DurationType, types.DurationType},
		{overloads.SubtractInt64, types.IntType, types.IntType, types.IntType},
		{overloads.SubtractTimestampDuration, types.TimestampType, types.DurationType, types.TimestampType},
		{overloads.SubtractTimestampTimestamp, types.TimestampType, types.TimestampType, types.DurationType},
		{overloads.SubtractUint64, types.UintType, types.UintType, types.UintType},
		{"subtract_int64_double", types.IntType, types.DoubleType, types.DoubleType},
		{"subtract_double_int64", types.DoubleType, types.IntType, types.DoubleType},
	}, func(l, r ref.Val) ref.Val { return l.(traits.Subtractor).Subtract(r) }},
	{operators.Multiply, []arithOverload{
		{overloads.MultiplyDouble, types.DoubleType, types.DoubleType, types.DoubleType},
		{overloads.MultiplyInt64, types.IntType, types.IntType, types.IntType},
		{overloads.MultiplyUint64, types.UintType, types.UintType, types.UintType},
		{"multiply_int64_double", types.IntType, types.DoubleType, types.DoubleType},
		{"multiply_double_int64", types.DoubleType, types.IntType, types.DoubleType},
	}, func(l, r ref.Val) ref.Val { return l.(traits.Multiplier).Multiply(r) }},
	{operators.Divide, []arithOverload{
		{overloads.DivideDouble, types.DoubleType, types.DoubleType, types.DoubleType},
		{overloads.DivideInt64, types.IntType, types.IntType, types.IntType},
		{overloads.DivideUint64, types.UintType, types.UintType, types.UintType},
		{"divide_int64_double", types.IntType, types.DoubleType, types.DoubleType},
		{"divide_double_int64", types.DoubleType, types.IntType, types.DoubleType},
	}, func(l, r ref.Val) ref.Val { return l.(traits.Divider).Divide(r) }},
}

var listOfA = types.NewListType(types.NewTypeParamType("A"))

type arithOverload struct {
	id       string
	lhs, rhs *types.Type
	result   *types.Type
}

// promote converts an int operand to double when the other one is a double.
func promote(l, r ref.Val) (ref.Val, ref.Val) {
	switch lv := l.(type) {
	case types.Int:
		if _, ok := r.(types.Double); ok {
			return types.Double(lv), r
		}
	case types.Double:
		if rv, ok := r.(types.Int); ok {
			return l, types.Double(rv)
		}
	}
	return l, r
}

func newBaseEnv() (*cel.Env, error) {
	subset := celenv.NewLibrarySubset()
	for _, a := range arithmetic {
		subset.AddExcludedFunctions(celenv.NewFunction(a.op))
	}
	subset.AddExcludedFunctions(celenv.NewFunction(operators.Equals), celenv.NewFunction(operators.NotEquals))
	opts := []cel.EnvOption{
		cel.StdLib(cel.StdLibSubset(subset)),
		cel.CrossTypeNumericComparisons(true),
		cel.EnableMacroCallTracking(),
		ext.Strings(),
		// lists.range(n) makes at most MaxEstimatedElements elements, the
		// size the cost estimate assumes of any list (celcost.go).
		ext.Lists(ext.ListsMaxRangeSize(MaxEstimatedElements)),
		ext.Math(),
		ext.Sets(),
		ext.Encoders(),
		cel.ASTValidators(equalityValidator{}),
	}
	opts = append(opts, urlFunctions()...)
	for _, a := range arithmetic {
		apply := a.apply
		bind := func(l, r ref.Val) ref.Val {
			l, r = promote(l, r)
			if types.IsError(l) || types.IsUnknown(l) {
				return l
			}
			return apply(l, r)
		}
		var fo []cel.FunctionOpt
		for _, o := range a.overloads {
			fo = append(fo, cel.Overload(o.id, []*cel.Type{o.lhs, o.rhs}, o.result, cel.BinaryBinding(bind)))
		}
		opts = append(opts, cel.Function(a.op, fo...))
	}
	// == and != take any two values; equalityValidator then rejects
	// operands that can never be equal, keeping the static check of
	// standard CEL while letting int meet double and anything meet null.
	// Equality is CEL's heterogeneous equality (1 == 1.0 is true).
	opts = append(opts,
		cel.Function(operators.Equals,
			cel.Overload(overloads.Equals, []*cel.Type{cel.DynType, cel.DynType}, cel.BoolType),
			cel.SingletonBinaryBinding(func(l, r ref.Val) ref.Val { return l.Equal(r) })),
		cel.Function(operators.NotEquals,
			cel.Overload(overloads.NotEquals, []*cel.Type{cel.DynType, cel.DynType}, cel.BoolType),
			cel.SingletonBinaryBinding(func(l, r ref.Val) ref.Val {
				if eq, ok := l.Equal(r).(types.Bool); ok {
					return !eq
				}
				return l.Equal(r)
			})),
	)
	env, err := cel.NewCustomEnv(opts...)
	if err != nil {
		return nil, err
	}
	return env, nil
}

// equalityValidator reports == and != between operands whose static types
// can never hold equal values (string and number, list and bool, ...).
type equalityValidator struct{}

// Name implements cel.ASTValidator.
func (equalityValidator) Name() string { return "flowrun.equality" }

// Validate implements cel.ASTValidator. It reports the == calls, then the
// != calls, each in post-order (as ast.MatchDescendants lists them).
func (equalityValidator) Validate(_ *cel.Env, _ cel.ValidatorConfig, a *ast.AST, iss *cel.Issues) {
	var eq, ne []ast.Expr
	postOrderCalls(a.Expr(), func(e ast.Expr) {
		switch e.AsCall().FunctionName() {
		case operators.Equals:
			eq = append(eq, e)
		case operators.NotEquals:
			ne = append(ne, e)
		}
	})
	for _, c := range append(eq, ne...) {
		args := c.AsCall().Args()
		if len(args) != 2 {
			continue
		}
		lt, rt := a.GetType(args[0].ID()), a.GetType(args[1].ID())
		if !comparable(lt, rt) {
			iss.ReportErrorAtID(c.ID(), "found no matching overload for '%s' applied to '(%s, %s)'",
				c.AsCall().FunctionName(), lt, rt)
		}
	}
}

// postOrderCalls calls f on every call in e, children first, in the order
// of ast.MatchDescendants, without building a navigable AST.
func postOrderCalls(e ast.Expr, f func(ast.Expr)) {
	switch e.Kind() {
	case ast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			postOrderCalls(c.Target(), f)
		}
		for _, arg := range c.Args() {
			postOrderCalls(arg, f)
		}
		f(e)
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		postOrderCalls(c.IterRange(), f)
		postOrderCalls(c.AccuInit(), f)
		postOrderCalls(c.LoopCondition(), f)
		postOrderCalls(c.LoopStep(), f)
		postOrderCalls(c.Result(), f)
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			postOrderCalls(el, f)
		}
	case ast.MapKind:
		for _, ent := range e.AsMap().Entries() {
			me := ent.AsMapEntry()
			postOrderCalls(me.Key(), f)
			postOrderCalls(me.Value(), f)
		}
	case ast.SelectKind:
		postOrderCalls(e.AsSelect().Operand(), f)
	case ast.StructKind:
		for _, fl := range e.AsStruct().Fields() {
			postOrderCalls(fl.AsStructField().Value(), f)
		}
	}
}

// comparable reports whether values of the two static types may be equal.
func comparable(a, b *types.Type) bool {
	if a == nil || b == nil {
		return true
	}
	loose := func(k types.Kind) bool {
		return k == types.DynKind || k == types.AnyKind || k == types.TypeParamKind ||
			k == types.NullTypeKind || k == types.ErrorKind
	}
	if loose(a.Kind()) || loose(b.Kind()) {
		return true
	}
	numeric := func(k types.Kind) bool {
		return k == types.IntKind || k == types.UintKind || k == types.DoubleKind
	}
	if numeric(a.Kind()) && numeric(b.Kind()) {
		return true
	}
	if a.Kind() != b.Kind() {
		// flowrun objects are maps at run time.
		return (a.Kind() == types.StructKind && b.Kind() == types.MapKind) ||
			(a.Kind() == types.MapKind && b.Kind() == types.StructKind)
	}
	switch a.Kind() {
	case types.ListKind:
		return comparable(a.Parameters()[0], b.Parameters()[0])
	case types.MapKind:
		return comparable(a.Parameters()[0], b.Parameters()[0]) && comparable(a.Parameters()[1], b.Parameters()[1])
	case types.StructKind, types.OpaqueKind:
		return a.TypeName() == b.TypeName()
	}
	return true
}

// scopeEnv is the environment of one scope: the base extended with the
// scope's variables, and the object types they use.
type scopeEnv struct {
	env   *cel.Env
	types *objectTypes
	vars  map[string]*graph.Type // declared variables and their flowrun types
	// graph and stepsName are the graph whose environment this is and the
	// name of its steps type (nil and "" for a scope's own environment).
	graph     *CelGraph
	stepsName string
	// warm builds the checker's suggestion catalog once, before the first
	// check of a comprehension (see warmChecker).
	warm sync.Once
}

// maxCachedEnvs bounds the environment cache; past it the cache restarts.
const maxCachedEnvs = 4096

var (
	envMu    sync.Mutex
	envCache = map[string]*scopeEnv{}
)

// ResetEnvCache empties the process-wide cache of scope environments, as
// in a process that has compiled nothing yet (for measuring a cold start).
func ResetEnvCache() {
	envMu.Lock()
	envCache = map[string]*scopeEnv{}
	envMu.Unlock()
}

// envFor returns the (cached) environment of a scope.
func envFor(s *Scope) (*scopeEnv, error) {
	key := s.key()
	envMu.Lock()
	se, ok := envCache[key]
	envMu.Unlock()
	if ok {
		return se, nil
	}
	se, err := newScopeEnv(s)
	if err != nil {
		return nil, err
	}
	envMu.Lock()
	if len(envCache) >= maxCachedEnvs {
		envCache = map[string]*scopeEnv{}
	}
	envCache[key] = se
	envMu.Unlock()
	return se, nil
}

// scopeVars returns the variables a scope declares with their types.
func scopeVars(s *Scope) map[string]*graph.Type {
	vars := map[string]*graph.Type{}
	if s.Inputs != nil {
		vars["input"] = s.Inputs
	}
	if s.Run {
		vars["run"] = RunType
	}
	if s.Steps != nil {
		fields := make(map[string]*graph.Type, len(s.Steps))
		for n, t := range s.Steps {
			fields[n] = StepResultType(t)
		}
		vars["steps"] = graph.ObjectOf(fields)
	}
	if s.Item != nil {
		vars["item"] = s.Item
		vars["index"] = graph.TypeInt
	}
	if s.Iteration {
		vars["iteration"] = graph.TypeInt
	}
	if s.Error {
		vars["error"] = ErrorType
	}
	if s.Event {
		vars["event"] = EventType
	}
	if s.Schedule {
		vars["schedule"] = ScheduleType
	}
	if s.Webhook {
		vars["body"] = graph.TypeAny
		vars["headers"] = HeadersType
	}
	if s.Secrets != nil {
		fields := make(map[string]*graph.Type, len(s.Secrets))
		for _, n := range s.Secrets {
			fields[n] = graph.TypeString
		}
		vars["secrets"] = graph.ObjectOf(fields)
	}
	return vars
}

func newScopeEnv(s *Scope) (*scopeEnv, error) {
	b, err := base()
	if err != nil {
		return nil, err
	}
	ot := newObjectTypes(b.CELTypeProvider())
	vars := scopeVars(s)
	opts := []cel.EnvOption{cel.CustomTypeProvider(ot)}
	for name, t := range vars {
		opts = append(opts, cel.Variable(name, ot.celType(t)))
	}
	env, err := b.Extend(opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the variables of %s: %w", s.where(), err)
	}
	return &scopeEnv{env: env, types: ot, vars: vars}, nil
}

// check type-checks a parsed tree in the environment.
//
// cel-go v0.33 builds the checker's symbol catalog (for "did you mean"
// suggestions) lazily under a sync.Once, when a check reports an
// undeclared name, but reads the catalog field without that Once when it
// checks a comprehension. A mistake checked on one goroutine while another
// checks a macro with the same environment would race. So before the
// first check of a comprehension in an environment, the catalog is built
// (warmChecker); checks of trees without comprehensions never read the
// field, and building the catalog (the whole environment rendered as a
// config) is left out of compiling the many workflows that use no macro.
func (se *scopeEnv) check(a *cel.Ast) (*cel.Ast, *cel.Issues) {
	if hasComprehension(a) {
		se.warm.Do(func() { warmChecker(se.env) })
	}
	checkRuns.Add(1)
	return se.env.Check(a)
}

// hasComprehension reports whether a parsed tree holds a comprehension (a
// macro's expansion).
func hasComprehension(a *cel.Ast) bool {
	found := false
	ast.PostOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.ComprehensionKind {
			found = true
		}
	}))
	return found
}

// warmRuns counts the catalog builds (warmChecker), for the tests.
var warmRuns atomic.Int64

// warmChecker makes env's type checker build its symbol catalog by
// checking an undeclared name once (see scopeEnv.check).
func warmChecker(env *cel.Env) {
	warmRuns.Add(1)
	a, ok := fastParse(env, "flowrun_undeclared_name")
	if !ok {
		var iss *cel.Issues
		if a, iss = env.Parse("flowrun_undeclared_name"); iss.Err() != nil {
			return
		}
	}
	_, _ = env.Check(a)
}
