package interp

import (
	"context"
	"errors"

	cryptorand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
)

// Options configure an Engine. The zero value of every field has a default.
type Options struct {
	// Clock tells the time and makes timers (default clock.Real).
	Clock clock.Clock
	// ActionClock times what a real program or request does while it
	// runs: an exec or http attempt's timeout and the grace between an
	// exec's SIGTERM and SIGKILL (default Clock). flowrun test sets the
	// real clock here: its virtual clock stands still while a real
	// program runs, so a timeout measured on it would never fire.
	ActionClock clock.Clock
	// Owner identifies this process in leases: host, pid and a worker-id
	// prefix (default: os.Hostname, os.Getpid, "w").
	Owner store.Owner
	// LeaseFor is how long a claim or heartbeat holds a run (default 30s).
	LeaseFor time.Duration
	// Heartbeat is how often held leases are extended (default LeaseFor/3).
	Heartbeat time.Duration
	// Getenv reads secrets (default os.Getenv).
	Getenv func(string) string
	// Environ is the worker's environment, from which an exec program
	// takes the base variables and those its workflow names in pass_env,
	// and nothing else (env.go; default os.Environ).
	Environ func() []string
	// ExecUser, when set, is the user every exec program (a step's, an
	// alert's) runs as, with its groups (spec/security.md §9): a user
	// other than the worker's keeps the programs away from the worker's
	// files and process. Needs root. Nil: the worker's own user.
	ExecUser *ExecUser
	// Rand is the only source of randomness: retry jitter and run ids
	// (default: a PCG seeded from crypto/rand). It is used under a lock.
	Rand *rand.Rand
	// HTTPClient makes the http actions' requests (default: a client
	// without a timeout; every attempt has its own).
	HTTPClient *http.Client
	// OnEvent is called after each commit with the events it appended, in
	// order, for progress output, and with the event that records each
	// alert delivery's try (alert_sent, alert_failed). It must not block
	// for long.
	OnEvent func(store.Event)
	// Poll is how often an idle claim loop looks for work when nothing is
	// known to be due (default 200ms).
	Poll time.Duration
	// ParkWait is how far ahead Drive keeps waiting in-process for a run
	// of its tree parked on a timer (sleep, retry backoff, until interval,
	// breaker cooldown) to become due; a run due later makes Drive return
	// it parked. 0 means no limit: Drive waits out every timer, as apply
	// does (semantics.md §17); a negative value never waits. Drive never
	// waits for what only the outside brings (a signal, a queue slot).
	ParkWait time.Duration
	// Concurrency is how many runs of one tree Drive works on at once
	// (default 16).
	Concurrency int
	// Mock, when set, is asked before an exec, http, wait or workflow
	// action is dispatched whether a test replaces it; when it answers ok
	// the engine takes its result instead of running the action (mock.go;
	// flowrun test, spec/testing.md). It is called from the action's
	// goroutine for exec and http, so it must be safe for concurrent use.
	// Production leaves it nil.
	Mock func(MockCall) (MockResult, bool)
	// BeforeCommit, when set, is called with each batch of transitions
	// just before the committer applies it; an error fails the batch with
	// that error and nothing of it is written, as if the process had died
	// before the commit. flowrun test --crash uses it to drop an engine
	// right after a chosen commit (commit.go). Production leaves it nil.
	BeforeCommit func([]store.Transition) error
	// HoldTimer, when set, lets a runner wait for a timer in place instead
	// of parking its run. It is asked, with the instant the run waits for,
	// when a top-level run with nothing to execute, no action in flight
	// and no unfinished child can be moved on only by a timer of its own
	// (a sleep, a retry backoff, an until interval, a breaker cooldown, or
	// the deadline; not a signal or a child), once the runner committed
	// its decisions. When it answers true the runner keeps its lease and
	// waits on the engine clock, and the run is neither claimed nor
	// rebuilt again when the timer fires (the engine's claim loops leave
	// the tree alone meanwhile; the heartbeat extends the lease and every
	// commit is fenced by it); when false the run is parked (invariant 7),
	// in a commit of its own. Every change is still one committed transition,
	// so an engine dropped while it holds leaves a run that a new engine
	// resumes as any run of a dead owner. It is for an engine alone with
	// its store and its clock: flowrun test moves its virtual clock to the
	// instant and answers true unless a signal or an upgrade of the test
	// comes first. Production leaves it nil: a worker parks a sleeping run
	// rather than holding a slot and a lease for it.
	HoldTimer func(wake time.Time) bool
	// Observer is told of runs started and ended, attempts ended, claims,
	// reclaims, commits and schedule fires, for metrics and traces
	// (telemetry.go; default telemetry.Nop). The engine knows no metrics
	// or tracing library: the CLI passes telemetry/metrics and
	// telemetry/tracing behind this interface.
	Observer telemetry.Observer
	// Traceparent passes each exec and http attempt its span as W3C trace
	// context: the TRACEPARENT variable of an exec program, the
	// traceparent header of an http request (set when tracing is on).
	Traceparent bool
	// TraceSampled, when set, says whether a run's trace is exported (the
	// tracer's sampler), for the sampled flag of the trace context an
	// attempt is given; unset, it is always sampled.
	TraceSampled func(traceID string) bool
}

// Engine runs workflow graphs against a store. It is safe for concurrent
// use; one Engine per process is the intended use.
type Engine struct {
	st   store.Store
	opts Options
	clk  clock.Clock
	com  *committer

	randMu sync.Mutex
	rnd    *rand.Rand

	graphs *graphCache // workflow + "\x00" + hash

	// letterRetries numbers this engine's dlq retries: each claims its
	// letter as an owner of its own (HOST/PID/dlqN), so two retries of
	// one letter in one process (two API calls to a server) are two
	// owners and the second is refused.
	letterRetries atomic.Int64

	mu      sync.Mutex
	runners map[string]*runner // active runners by run id
	pools   map[*pool]struct{}
	// alertLoops are the alert loops of this process's pools (alert.go).
	alertLoops map[*alertLoop]struct{}
	seq        int

	// lean is when a rebuild reads step heads first (rebuild.go).
	lean leanRebuild
	// gates counts the gate checks of steps that had not begun (decide's
	// work, read by tests).
	gates atomic.Int64
}

// loaded is a decoded graph and its compiled program, shared by every run
// of that graph.
type loaded struct {
	g    *graph.Graph // its indices by step are its methods (StepIndex, ...)
	prog *expr.Program
	hash string
	comp compSteps // the steps the compensations run as (compensate.go)
}

// step returns the step of the graph named name, or nil.
func (l *loaded) step(name string) *graph.Step {
	if i, ok := l.g.StepIndex(name); ok {
		return l.g.Steps[i]
	}
	if isComp(name) {
		return l.compensations().steps[name]
	}
	return nil
}

// New returns an Engine over st.
func New(st store.Store, opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Owner.Host == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "localhost"
		}
		opts.Owner.Host = h
	}
	if opts.Owner.PID == 0 {
		opts.Owner.PID = os.Getpid()
	}
	if opts.Owner.Worker == "" {
		opts.Owner.Worker = "w"
	}
	if opts.LeaseFor <= 0 {
		opts.LeaseFor = 30 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = opts.LeaseFor / 3
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.Rand == nil {
		var seed [16]byte
		_, _ = cryptorand.Read(seed[:])
		opts.Rand = rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Poll <= 0 {
		opts.Poll = 200 * time.Millisecond
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	if opts.Observer == nil {
		opts.Observer = telemetry.Nop{}
	}
	e := &Engine{
		st:      st,
		opts:    opts,
		clk:     opts.Clock,
		rnd:     opts.Rand,
		graphs:  newGraphCache(graphCacheSteps),
		runners: map[string]*runner{},
		pools:   map[*pool]struct{}{},

		alertLoops: map[*alertLoop]struct{}{},
		lean:       leanRebuild{keys: 256, share: 4},
	}
	e.com = &committer{e: e}
	return e
}

// Store returns the engine's store.
func (e *Engine) Store() store.Store { return e.st }

// StoreGraph stores g, a sealed graph, as a workflow version (its
// canonical encoding and hash, computed from one encoding). Storing the
// same version with the same graph again is a no-op. Another graph of a
// stored development version (MAJOR 0) replaces it as its next revision
// (spec/versioning.md §8), refused with a *store.VersionInUseError while
// an unfinished run is bound to it; of a released version it is
// store.ErrVersionConflict. Callers check the version first
// (CheckVersion), which also says whether a replacement is allowed. It puts g in normal
// form (a sealed graph is) and seeds the engine's graph cache with it, so
// that a run of the version just stored, and Graph, use g without reading
// back and decoding what was just encoded: g belongs to the engine from
// then on and must not be modified.
func (e *Engine) StoreGraph(ctx context.Context, g *graph.Graph) (store.Version, error) {
	return e.StoreGraphAt(ctx, g, "")
}

// StoreGraphAt is StoreGraph that also records workDir, the absolute
// directory of the workflow file, as where the runs of the version that
// are started without a directory of their own execute (through the API
// or a webhook). "" records nothing and keeps what was recorded.
func (e *Engine) StoreGraphAt(ctx context.Context, g *graph.Graph, workDir string) (store.Version, error) {
	return e.StoreGraphFrom(ctx, g, workDir, "", nil)
}

// StoreGraphFrom is StoreGraphAt that also keeps source, the text of the
// file named sourceName that g was compiled from, for people to read
// (store.Store.VersionSource); nil keeps none.
func (e *Engine) StoreGraphFrom(ctx context.Context, g *graph.Graph, workDir, sourceName string, source []byte) (store.Version, error) {
	if g == nil {
		return store.Version{}, errors.New("store a workflow version: the graph is nil")
	}
	b, h, err := graph.NormalizeEncodeHashed(g)
	if err != nil {
		return store.Version{}, fmt.Errorf("store workflow %q: %w", g.Workflow, err)
	}
	sv, err := graph.ParseVersion(g.Version)
	if err != nil {
		return store.Version{}, fmt.Errorf("store workflow %q: %w", g.Workflow, err)
	}
	v, err := e.st.VersionPut(ctx, store.VersionPutParams{
		Workflow: g.Workflow, Version: g.Version,
		Major: sv.Major, Minor: sv.Minor, Patch: sv.Patch,
		Hash: h, Graph: b, Steps: len(g.Steps), SignalTypes: graph.SignalTypes(g), Now: e.clk.Now(), WorkDir: workDir,
		Replace: sv.Major == 0, Source: source, SourceName: sourceName,
	})
	if err != nil {
		return store.Version{}, err // the store's error names the workflow and version
	}
	e.seed(g, h)
	return v, nil
}

// seed caches g, just stored under hash, as its decoded graph. Its
// program indexes the graph's expressions on first use
// (expr.LoadCompiled): a process that stores a graph and exits (apply
// --detach) never does.
func (e *Engine) seed(g *graph.Graph, hash string) {
	k := g.Workflow + "\x00" + hash
	if e.graphs.get(k) != nil {
		return
	}
	e.graphs.put(k, &loaded{g: g, prog: expr.LoadCompiled(g), hash: hash})
}

// load returns the decoded graph and program of a stored version, cached
// by hash.
func (e *Engine) load(ctx context.Context, workflow, hash string) (*loaded, error) {
	return e.loadDecoding(ctx, workflow, hash, nil)
}

// loadDecoding is load that, when it read the graph and is about to decode
// it, first calls decoding (if not nil) with the graph's size in bytes, so
// the caller may start other reads that the decode then hides.
func (e *Engine) loadDecoding(ctx context.Context, workflow, hash string, decoding func(size int)) (*loaded, error) {
	if l := e.graphs.get(workflow + "\x00" + hash); l != nil {
		return l, nil
	}
	v, err := e.st.VersionGetByHash(ctx, workflow, hash)
	if err != nil {
		return nil, fmt.Errorf("load workflow %q graph %.12s: %w", workflow, hash, err)
	}
	if decoding != nil {
		decoding(len(v.Graph))
	}
	return e.loadVersion(v)
}

// loadVersion decodes and compiles a stored version, cached by hash.
func (e *Engine) loadVersion(v store.Version) (*loaded, error) {
	k := v.Workflow + "\x00" + v.Hash
	if l := e.graphs.get(k); l != nil {
		return l, nil
	}
	g, err := decodeGraph(v.Graph)
	if err != nil {
		return nil, &GraphError{Workflow: v.Workflow, Version: v.Version, Err: err}
	}
	size := len(v.Graph)
	v.Graph = nil // garbage from here on (see collectAfterLoad)
	prog, err := expr.Load(g)
	if err != nil {
		return nil, &GraphError{Workflow: v.Workflow, Version: v.Version, Err: err}
	}
	l := &loaded{g: g, prog: prog, hash: v.Hash}
	l = e.graphs.put(k, l)
	if size >= collectAfterLoadBytes {
		collectAfterLoad()
	}
	return l, nil
}

// decodeGraph decodes a stored graph; tests count its calls.
var decodeGraph = graph.Decode

// collectAfterLoadBytes is the size of a stored graph from which loading it
// ends with a collection (collectAfterLoad): a 10,000-step chain is 3 MB.
const collectAfterLoadBytes = 1 << 20

// collectAfterLoad runs a garbage collection once a large graph is loaded.
// While it is decoded, the stored bytes and the decoder's garbage are live
// next to the graph, and a collection then (the heap grows fast) sets the
// next heap goal at twice all that: the run that follows fills the heap up
// to it (a 10,000-step run peaked at a 27 MB heap for 9 MB live). Collecting
// at the end sets the goal from the graph alone. It costs a few
// milliseconds, once per large graph per process (the graph is cached).
var collectAfterLoad = runtime.GC

// int63n draws a uniform integer in [0, n) from the injected source.
func (e *Engine) int63n(n int64) int64 {
	if n <= 0 {
		return 0
	}
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return e.rnd.Int64N(n)
}

// newID returns a ULID: 48 bits of milliseconds from the engine clock and
// 80 random bits from the injected source, in Crockford base32, so ids sort
// by creation time.
func (e *Engine) newID() string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	ms := uint64(e.clk.Now().UnixMilli())
	e.randMu.Lock()
	hi := e.rnd.Uint64() & 0xffff // 16 bits
	lo := e.rnd.Uint64()          // 64 bits
	e.randMu.Unlock()
	var b [26]byte
	// 128-bit value: ms(48) | hi(16) | lo(64); emit 26 base32 digits (130 bits, top 2 zero).
	v1 := ms<<16 | hi // top 64 bits
	v0 := lo          // low 64 bits
	for i := 25; i >= 0; i-- {
		d := v0 & 31
		b[i] = alphabet[d]
		v0 = v0>>5 | (v1&31)<<59
		v1 >>= 5
	}
	return string(b[:])
}

// register records an active runner so in-process signals, cancels and
// child completions reach it at once.
func (e *Engine) register(r *runner) {
	e.mu.Lock()
	e.runners[r.run.ID] = r
	e.mu.Unlock()
}

func (e *Engine) unregister(r *runner) {
	e.mu.Lock()
	if e.runners[r.run.ID] == r {
		delete(e.runners, r.run.ID)
	}
	e.mu.Unlock()
}

// poke tells the active runner of a run (if any in this process) to look
// at the store again: a signal arrived or a child finished.
func (e *Engine) poke(runID string) {
	e.mu.Lock()
	r := e.runners[runID]
	e.mu.Unlock()
	if r != nil {
		r.recheck.Store(true)
		r.nudge()
	}
}

// wakePools tells every claim loop of this process to look for work now.
func (e *Engine) wakePools() {
	e.mu.Lock()
	for p := range e.pools {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	e.mu.Unlock()
}

// beatPools makes every claim loop of this process heartbeat now, so a
// cancel request reaches its runners at once.
func (e *Engine) beatPools() {
	e.mu.Lock()
	for p := range e.pools {
		select {
		case p.beatNow <- struct{}{}:
		default:
		}
	}
	e.mu.Unlock()
}

func (e *Engine) addPool(p *pool) {
	e.mu.Lock()
	e.pools[p] = struct{}{}
	e.seq++
	p.owner = e.opts.Owner
	p.owner.Worker = fmt.Sprintf("%s%d", e.opts.Owner.Worker, e.seq)
	e.mu.Unlock()
}

func (e *Engine) removePool(p *pool) {
	e.mu.Lock()
	delete(e.pools, p)
	e.mu.Unlock()
}
