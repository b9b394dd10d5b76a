package telemetry

import "time"

// Observer is told what the engine did. Every method is called after the
// fact it reports is committed to the store (a run's end, an attempt's
// end) or has happened (a claim, a commit), from whichever goroutine did
// it, so implementations must be safe for concurrent use and quick.
type Observer interface {
	// RunStarted: this process claimed a run for the first time (its
	// first lease).
	RunStarted(r Run)
	// RunEnded: this process committed the end of a run (completed,
	// failed or canceled), at r.Finished.
	RunEnded(r Run)
	// AttemptEnded: an attempt of an exec or http step ended, committed
	// by this process: completed, failed, canceled, or interrupted
	// (also when this process closed, on a claim, the attempt of a
	// worker that died).
	AttemptEnded(a Attempt)
	// Claimed: this process claimed n runs.
	Claimed(n int)
	// Reclaimed: this process claimed a run and found an attempt of a
	// worker that is gone still running (it closes it as interrupted).
	Reclaimed(workflow string)
	// Committed: one store commit (of one or more transitions) took d;
	// failed says it returned an error.
	Committed(d time.Duration, failed bool)
	// ScheduleFired: a schedule's slot started a run lag after the slot.
	ScheduleFired(workflow string, lag time.Duration)
	// ScheduleSlotFailed: this process recorded a due slot of a schedule
	// skipped because its inputs or run key failed to evaluate (err says
	// how): the slot starts no run, and no later pass tries it again.
	ScheduleSlotFailed(workflow, schedule string, slot time.Time, err error)
	// StoreFailing: a worker's claims or commits began to fail, err the
	// first failure; told once per failing period.
	StoreFailing(err error)
	// StoreRecovered: the store answers a worker again after failing for
	// d (since StoreFailing).
	StoreRecovered(d time.Duration)
	// LeaseLost: this process found that another took the lease of a run
	// it worked on (its own lapsed, a stop or a pause past it): it
	// stopped working on the run, abandoning the steps in flight.
	LeaseLost(l LeaseLoss)
	// RunsPruned: retention deleted n finished runs of a workflow (their
	// child runs counted too).
	RunsPruned(workflow string, n int)
}

// LeaseLoss is a run this process lost the lease of.
type LeaseLoss struct {
	Run Run
	// Steps are the step keys whose attempts were in flight, abandoned.
	Steps []string
	// TakenBy is the lease owner the store holds now ("" when no one
	// holds it, or when it could not be read).
	TakenBy string
}

// Run is a run as the engine reports it.
type Run struct {
	ID       string
	Workflow string
	Version  string
	// Status is the run's status: running when started, completed,
	// failed or canceled when ended.
	Status string
	// ErrorKind is the kind of the run's error when it failed, ErrorType
	// its problem type URI (spec/semantics.md §6) and ErrorStatus its
	// status (0: none).
	ErrorKind   string
	ErrorType   string
	ErrorStatus int
	Created     time.Time
	Started     time.Time
	Finished    time.Time
	// Parent is the parent run's id for a child run.
	Parent string
	Trace  Trace
}

// Attempt is an attempt of an exec or http step as the engine reports it.
type Attempt struct {
	Run      Run
	StepKey  string // the step key: NAME, NAME[i], NAME#n
	Step     string // the step's name
	Attempt  int
	Kind     string // exec or http
	Status   string // completed, failed, canceled, interrupted
	ErrKind  string // the error's kind when not completed
	Started  time.Time
	Finished time.Time
}

// Nop is an Observer that does nothing: the engine's default.
type Nop struct{}

func (Nop) RunStarted(Run)                                      {}
func (Nop) RunEnded(Run)                                        {}
func (Nop) AttemptEnded(Attempt)                                {}
func (Nop) Claimed(int)                                         {}
func (Nop) Reclaimed(string)                                    {}
func (Nop) Committed(time.Duration, bool)                       {}
func (Nop) ScheduleFired(string, time.Duration)                 {}
func (Nop) ScheduleSlotFailed(string, string, time.Time, error) {}
func (Nop) StoreFailing(error)                                  {}
func (Nop) StoreRecovered(time.Duration)                        {}
func (Nop) LeaseLost(LeaseLoss)                                 {}
func (Nop) RunsPruned(string, int)                              {}

// Multi returns an Observer that tells each of obs in turn (nil ones are
// left out); with none it is Nop, with one that one.
func Multi(obs ...Observer) Observer {
	var m multi
	for _, o := range obs {
		if o != nil {
			m = append(m, o)
		}
	}
	switch len(m) {
	case 0:
		return Nop{}
	case 1:
		return m[0]
	}
	return m
}

type multi []Observer

func (m multi) RunStarted(r Run) {
	for _, o := range m {
		o.RunStarted(r)
	}
}

func (m multi) RunEnded(r Run) {
	for _, o := range m {
		o.RunEnded(r)
	}
}

func (m multi) AttemptEnded(a Attempt) {
	for _, o := range m {
		o.AttemptEnded(a)
	}
}

func (m multi) Claimed(n int) {
	for _, o := range m {
		o.Claimed(n)
	}
}

func (m multi) Reclaimed(workflow string) {
	for _, o := range m {
		o.Reclaimed(workflow)
	}
}

func (m multi) Committed(d time.Duration, failed bool) {
	for _, o := range m {
		o.Committed(d, failed)
	}
}

func (m multi) ScheduleFired(workflow string, lag time.Duration) {
	for _, o := range m {
		o.ScheduleFired(workflow, lag)
	}
}

func (m multi) ScheduleSlotFailed(workflow, schedule string, slot time.Time, err error) {
	for _, o := range m {
		o.ScheduleSlotFailed(workflow, schedule, slot, err)
	}
}

func (m multi) StoreFailing(err error) {
	for _, o := range m {
		o.StoreFailing(err)
	}
}

func (m multi) StoreRecovered(d time.Duration) {
	for _, o := range m {
		o.StoreRecovered(d)
	}
}

func (m multi) LeaseLost(l LeaseLoss) {
	for _, o := range m {
		o.LeaseLost(l)
	}
}

func (m multi) RunsPruned(workflow string, n int) {
	for _, o := range m {
		o.RunsPruned(workflow, n)
	}
}
