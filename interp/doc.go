// Package interp owns executing a stored workflow Graph for a run: claiming
// runs, rebuilding their state from the store, scheduling ready steps, the
// actions (exec, http, set, switch, sleep, wait, workflow, fail), templates
// and secrets, retry with backoff and recorded jitter, timeouts, foreach,
// until, child runs, signals, cancel, deadlines, leases and heartbeats, and
// the worker pool.
//
// interp must not parse HCL (it runs graphs decoded with graph.Decode from
// the bytes the store keeps, or the compiled graph it stored itself, which
// seeds its graph cache), must not read the wall clock (it uses the injected
// clock.Clock) and must not draw random numbers except from the injected
// source (Options.Rand), so that a run replays the same way on a fake clock.
//
// # The runner
//
// A runner works on one claimed run. It is two parts:
//
//   - the scheduler (scheduler_pass.go; its rules in schedule.go,
//     foreach.go, keep.go, unit.go, end.go, breaker.go) holds every
//     decision rule. From the run's state,
//     what the run works with, and the pass's event (an instant, the
//     cancel, stop or drain requested, whether the supervisor can hold the
//     run), it decides as data: the store transition being built, the
//     attempts to launch (their parameters evaluated), the actions in
//     flight to stop, the child runs to start and to cancel, the run's
//     end, and for a run left with nothing to execute now whether it
//     parks or the supervisor holds it until its next timer
//     (Options.HoldTimer; hold.go). It starts no goroutine, reads no clock, touches no channel or
//     atomic flag and calls no store: what it asks beyond the run (a
//     child workflow's graph, a breaker's state, Options.Mock, a jitter
//     draw) goes through a small interface (outside) that the engine
//     answers and its tests fake. CEL evaluation is pure computation.
//     TestSchedulerMethodsArePure checks its methods' source for it, and
//     TestSchedulerHoldsNoEffects the types it holds.
//   - the supervisor (runner.go, the runner's own methods) owns the
//     goroutines, channels, timers, lease and commits: it rebuilds the
//     state from the store (rebuild.go), turns events into calls of the
//     scheduler (an attempt's end, a signal or a child's end, a timer, a
//     cancel, a stop, a drain), commits what it decided, makes flights of
//     its launches (with their live output writers), stops the flights
//     it stopped, and carries out a hold (asks Options.HoldTimer, and has
//     the scheduler park the run when the hook refuses).
//
// The runner's fields are four types, one per concern, each in a file of
// its name: runEnv (what the run works with and does not change once it
// is rebuilt: the graph, the run and its lease, inputs, secrets, the
// redactor), runState (the run's state as plain data: step rows and their
// State, attempt numbers, retry budgets, results, signals, child runs,
// foreach cursors, the attempts in flight), decisions (what the current
// pass decided and has not yet committed) and supervisor (the engine, the
// flights, their wait group and channels, the flags other goroutines
// set). The scheduler points at the first three.
//
// # Invariants
//
// These are the rules the engine keeps; spec/semantics.md states them for
// users.
//
//  1. The store is the only state. A runner rebuilds everything it knows
//     about a run from StepList, AttemptList and SignalList when it claims
//     the run; nothing survives in memory between claims that is not also in
//     the store.
//  2. Every change of a run is one store.Transition, fenced by the run's
//     lease (owner, epoch). A runner whose transition is fenced off
//     (store.ErrLeaseLost) stops its actions and writes nothing more.
//  3. Double-ended writes: an exec or http attempt is committed as running
//     (with its owner, start time and idempotency key) before the action
//     starts, and committed as completed or failed after it ends, in the
//     same transition as the scheduling decisions that follow from it (the
//     next steps' running writes, skips, the run's end). An exec's process
//     may be created while its running write commits, but it is held before
//     its program's first instruction until that commit is durable
//     (runner.hold, startGated). set, switch, fail, the
//     start of sleep and wait, skip decisions and child starts have no
//     running write: each is recorded exactly once, in one transition.
//  4. At most one write per step key per transition: a transition carries the
//     final state of each step key it touches.
//  5. A running attempt found when a run is claimed belongs to a worker that
//     is gone: it is closed as interrupted (event "interrupted") and the step
//     is executed again with the next attempt number, in the same transition.
//     Side effects are therefore at-least-once; the idempotency key, the same
//     for every attempt of a step key, makes them safe. An interrupted
//     attempt counts against neither the step's retry budget nor
//     Limits.Attempts (it is given back); the step's State counts the
//     interruptions in a row, and at maxInterrupts the step fails with kind
//     "interrupted" instead of running again.
//  6. Nothing random or time-dependent is recomputed on replay: the jitter of
//     a retry delay, the wake time of a sleep or a backoff, the items of a
//     foreach and the branch of a switch are recorded (step State, WakeAt,
//     events) when first decided and read back afterwards.
//  7. A run that has nothing to execute now is parked: its lease is released,
//     its status is waiting, available_at is the earliest time something in
//     it becomes due (a timer, a backoff, a wait timeout, the deadline) or
//     far in the future when it waits only on a signal or a child, and
//     wait_reason says why. Signals and finishing children wake it.
//  8. When a run ends (completed, failed or canceled) every step that had
//     started and not finished is written canceled, with its attempt in
//     flight canceled, in the same transition; steps that never started keep
//     no row and show as pending. A run that fails cancels its unfinished
//     child runs. A child run's final transition wakes its parent.
//  9. Stopping a runner (Drive's context canceled, a worker's grace period
//     over) kills its actions, records their attempts as interrupted, puts
//     their steps back to pending and releases the run with available_at now,
//     so any worker resumes it at once. A draining runner begins no step
//     key of any kind (set included): it parks the run, due now, once its
//     actions in flight have ended. A drain, like a cancel or a stop, is
//     read once at the start of a decision pass (passEvent) and the whole
//     pass decides on it: one requested while a pass decides takes effect
//     at the next pass, so the pass under way still begins what it
//     decided (at most one commit, maxTxSteps step writes; its actions run
//     as any in flight) and no pass after it begins a step key. A pass is
//     one decision on one snapshot of the requests: read live, a drain
//     would split a pass's ready steps by the instant it came.
//
// # Retry, attempts and errors
//
// Only exec and http actions have attempt rows: they are the actions with
// side effects and the only ones retried (per Step.Retry, counting failed
// attempts) and timed out (Step.TimeoutMS). Limits.Attempts counts every
// start of a step key whatever its action (useAttempt), each retry and each
// child run. set, switch and fail are deterministic and run once: an evaluation error
// fails the step with kind "expression" and is never retried. sleep, wait
// and workflow record one logical attempt and are not retried (a failed
// child is not restarted; a workflow step's timeout cancels its child and
// fails the step with kind "timeout"). A step error is {"kind","message"}
// plus "exit_code" (exec; 128+N when killed by signal N), "status" (http),
// "child_error" (workflow). What a failed attempt produced (exec streams,
// the http response) is the attempt's output and, once the step failed,
// the step's output; it is not part of the error. An action that uses a
// secret whose variable is unset (or empty) fails with kind "secret"
// without running and is not retried. A retry that would begin at or after
// the run's deadline fails the step and then the run (kind "deadline");
// nothing decided later in that transition can complete the run.
//
// An exec or http attempt's timeout, and the grace below, are measured on
// the action clock (Options.ActionClock, the engine clock unless flowrun
// test set the real one). On timeout, cancel or stop, an exec's whole
// process group gets SIGTERM and, 5 s later on the action clock, SIGKILL; what is left of the group
// once the program ended is killed then. A program that exits while a
// process it left behind holds its stdout or stderr open ends with its own
// exit status and the output read up to 2 s after its exit. On Linux an exec also dies with
// the flowrun process (Pdeathsig), and reclaiming a run whose owner died on
// this host kills what is left of the interrupted attempt (killOrphans).
// exec runs in the run's WorkDir (the workflow file's directory) unless
// dir says otherwise, and a relative command[0] with a slash resolves there.
//
// # Test hooks
//
// flowrun test (spec/testing.md) runs workflows through this same engine
// with two narrow hooks that production leaves nil. Options.Mock is asked,
// where an exec, http, wait or workflow action is dispatched, whether a
// test replaces it, and its result is taken as the action's (mock.go): the
// double-ended writes, retries, timeouts on the engine clock and the
// scheduling around a mocked action are the engine's own; a mocked exec or
// http attempt's MockCall.Context is done when the engine stops it.
// Options.BeforeCommit sees every batch of transitions before the
// committer applies it and may refuse it (commit.go): refusing every batch
// after the Nth stops the engine as a process killed right after commit N,
// so a test can rebuild a new engine from the store at every commit point.
//
// # Events
//
// run_created, claimed, step_started (also when a sleep, wait or until
// interval begins), step_completed, step_failed, step_skipped,
// step_canceled, retry_scheduled (attempt, delay_ms, jitter_ms, wake_at),
// retry_when_failed, interrupted, signal_consumed, child_started,
// dead_lettered (index, item, error), run_completed, run_failed,
// run_canceled, run_parked (reason, available_at), retried.
package interp
