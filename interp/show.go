package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// RunView is the `show --json` (and `apply --json`) object of a run; its
// JSON form is spec/semantics.md §16 exactly (MarshalJSON, and
// UnmarshalJSON reads it back whole). Everything the human view prints is
// in that form, so a view read from a server prints as the local one.
type RunView struct {
	RunID    string
	Workflow string
	Version  string
	Key      string
	Status   store.RunStatus
	Inputs   json.RawMessage
	Outputs  json.RawMessage
	Error    json.RawMessage
	Steps    map[string]*StepView

	// Attempt is run.attempt: 1 + the number of redrives (flowrun retry).
	Attempt int
	RunTimes
	// WaitReason says why a waiting or blocked run waits ("" otherwise).
	WaitReason  string
	ParentRunID string
	ParentStep  string
	// TraceID is the run's OpenTelemetry trace id (a child run's is its
	// parent's); "" for a run stored before traces were recorded.
	TraceID string
	// Revision is the revision of its development version (MAJOR 0) the
	// run is bound to, when that version was replaced at least once
	// (spec/versioning.md §8), and Current the version's current one;
	// both 0 otherwise.
	Revision, Current int
	// Order lists the step names in the graph's (topological) order
	// (step_order: JSON objects have no order).
	Order []string
	// Schedule is the fire that started the run, when a schedule did (or
	// a manual trigger of one); nil otherwise (and absent from the JSON).
	Schedule *store.ScheduleFire
}

// RunTimes are the instants of a RunView, nil when the run has none.
type RunTimes struct {
	CreatedAt   *time.Time
	StartedAt   *time.Time
	FinishedAt  *time.Time
	AvailableAt *time.Time // of a waiting run
	DeadlineAt  *time.Time
}

// StepView is one step of a RunView.
type StepView struct {
	Status   store.StepStatus
	Attempts int
	Output   json.RawMessage
	Error    json.RawMessage // nil when none
	// Items are the foreach items, by index.
	Items []ItemView
	// Fold is the foreach items as totals, in place of Items, in a view
	// from ShowFolded; nil otherwise. It is not part of the JSON form:
	// Folded gives the same totals from either.
	Fold *ItemFold
	// Iterations is how many until iterations ran.
	Iterations int
	// ChildRunID is the child run of a workflow step, once started.
	ChildRunID string
	StartedAt  *time.Time
	FinishedAt *time.Time
	WakeAt     *time.Time
	// Detail says what a waiting step waits for, or why it was skipped.
	Detail string
	// OpenAPI is the OpenAPI operation the step calls, for a step written
	// as an openapi action (language.md §8.10); nil otherwise (and absent
	// from the JSON).
	OpenAPI *graph.OpenAPIRef

	foreach, until bool
}

// ItemView is one foreach item of a StepView.
type ItemView struct {
	Index    int
	Item     json.RawMessage // the item value, as recorded when the step began
	Status   store.StepStatus
	Attempts int
	Output   json.RawMessage
	Error    json.RawMessage // nil when none
}

// ItemFold is a foreach step's items as totals: how many have each
// status, and the first failed ones.
type ItemFold struct {
	// Counts are how many items have each status (absent: none).
	Counts map[store.StepStatus]int
	// Failed are the failed items of lowest index, as many as were asked
	// for (Counts[StepFailed] says how many there are).
	Failed []ItemView
}

// Total is how many items the fold counts.
func (f *ItemFold) Total() int {
	n := 0
	for _, c := range f.Counts {
		n += c
	}
	return n
}

// Folded returns the step's items as totals with at most maxFailed
// failed items: its Fold when the view was read folded, else the fold of
// its Items; nil for a step without items.
func (s *StepView) Folded(maxFailed int) *ItemFold {
	if s.Fold != nil {
		f := *s.Fold
		f.Failed = f.Failed[:min(len(f.Failed), maxFailed)]
		return &f
	}
	if len(s.Items) == 0 {
		return nil
	}
	f := &ItemFold{Counts: map[store.StepStatus]int{}}
	for _, it := range s.Items {
		f.Counts[it.Status]++
		if it.Status == store.StepFailed && len(f.Failed) < maxFailed {
			f.Failed = append(f.Failed, it)
		}
	}
	return f
}

// timeLayout is RFC 3339 with exactly three fraction digits: times in
// the JSON form are that, in UTC, or null.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the run in the form of semantics.md §16. It is
// written by hand, not through encoding/json, which would validate the
// stored values it embeds and refuse one nested deeper than its limit of
// 10,000 levels (a value stored before flowrun bounded them at
// lang.MaxValueDepth): show --json prints what is stored, whatever it is.
func (v *RunView) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 0, 512+len(v.Inputs)+len(v.Outputs)+len(v.Error)+len(v.Steps)*160)
	buf = append(buf, `{"run_id":`...)
	buf = appendJSONString(buf, v.RunID)
	buf = append(buf, `,"workflow":`...)
	buf = appendJSONString(buf, v.Workflow)
	buf = append(buf, `,"version":`...)
	buf = appendJSONString(buf, v.Version)
	buf = append(buf, `,"key":`...)
	buf = appendJSONString(buf, v.Key)
	buf = append(buf, `,"status":`...)
	buf = appendJSONString(buf, string(v.Status))
	buf = append(buf, `,"wait_reason":`...)
	if v.WaitReason != "" && (v.Status == store.RunWaiting || v.Status == store.RunBlocked) {
		buf = appendJSONString(buf, v.WaitReason)
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"inputs":`...)
	buf = appendJSONRaw(buf, orNull(v.Inputs))
	buf = append(buf, `,"outputs":`...)
	buf = appendJSONRaw(buf, orNull(v.Outputs))
	buf = append(buf, `,"error":`...)
	buf = appendJSONRaw(buf, orNull(v.Error))
	buf = append(buf, `,"parent":`...)
	if v.ParentRunID != "" {
		buf = append(buf, `{"run_id":`...)
		buf = appendJSONString(buf, v.ParentRunID)
		buf = append(buf, `,"step":`...)
		buf = appendJSONString(buf, v.ParentStep)
		buf = append(buf, '}')
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"trace_id":`...)
	if v.TraceID != "" {
		buf = appendJSONString(buf, v.TraceID)
	} else {
		buf = append(buf, "null"...)
	}
	if f := v.Schedule; f != nil {
		buf = append(buf, `,"schedule":{"name":`...)
		buf = appendJSONString(buf, f.Schedule)
		buf = append(buf, `,"slot":`...)
		buf = appendJSONTime(buf, &f.Slot)
		buf = append(buf, `,"manual":`...)
		buf = strconv.AppendBool(buf, f.Reason == "manual")
		buf = append(buf, '}')
	}
	buf = append(buf, `,"attempt":`...)
	buf = strconv.AppendInt(buf, int64(max(v.Attempt, 1)), 10)
	buf = append(buf, `,"created_at":`...)
	buf = appendJSONTime(buf, v.CreatedAt)
	buf = append(buf, `,"started_at":`...)
	buf = appendJSONTime(buf, v.StartedAt)
	buf = append(buf, `,"finished_at":`...)
	buf = appendJSONTime(buf, v.FinishedAt)
	buf = append(buf, `,"deadline_at":`...)
	buf = appendJSONTime(buf, v.DeadlineAt)
	buf = append(buf, `,"available_at":`...)
	buf = appendJSONTime(buf, v.AvailableAt)
	buf = append(buf, `,"revision":`...)
	if v.Revision > 0 {
		buf = append(buf, `{"bound":`...)
		buf = strconv.AppendInt(buf, int64(v.Revision), 10)
		buf = append(buf, `,"current":`...)
		buf = strconv.AppendInt(buf, int64(v.Current), 10)
		buf = append(buf, '}')
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"step_order":[`...)
	for i, name := range v.Order {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, name)
	}
	buf = append(buf, ']')
	// The steps are written here rather than through encoding/json's map
	// and Marshaler handling, which validates and compacts each step's
	// JSON once more at every level: for a run of 10,000 steps that was a
	// quarter of show's time. Keys are sorted, as encoding/json sorts them.
	names := make([]string, 0, len(v.Steps))
	for name := range v.Steps {
		names = append(names, name)
	}
	sort.Strings(names)
	buf = append(buf, `,"steps":{`...)
	for i, name := range names {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, name)
		buf = append(buf, ':')
		buf = v.Steps[name].appendJSON(buf)
	}
	return append(buf, "}}"...), nil
}

// marshalNoHTML is json.Marshal without the escaping of <, > and & (the
// CLI prints JSON for programs and people, not for HTML pages).
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// appendJSONString appends s as a JSON string.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := marshalNoHTML(s) // rare: let encoding/json escape it
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// appendJSONTime appends a time in the JSON form (timeLayout, UTC) or null.
func appendJSONTime(buf []byte, t *time.Time) []byte {
	if t == nil || t.IsZero() {
		return append(buf, "null"...)
	}
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, timeLayout)
	return append(buf, '"')
}

// appendJSONRaw appends a stored JSON value (written by the engine, so
// valid) as it is, or null; the printer lays the whole view out.
func appendJSONRaw(buf []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(buf, "null"...)
	}
	return append(buf, raw...)
}

// MarshalJSON writes the step in the form of semantics.md §16: iterations
// only for until steps, child_run_id only for a started workflow step,
// openapi only for a step written as an openapi action, items only for
// foreach steps.
func (s *StepView) MarshalJSON() ([]byte, error) {
	return s.appendJSON(nil), nil
}

// appendJSON appends the step's JSON form (see MarshalJSON) to buf.
func (s *StepView) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"status":`...)
	buf = appendJSONString(buf, string(s.Status))
	buf = append(buf, `,"attempts":`...)
	buf = strconv.AppendInt(buf, int64(s.Attempts), 10)
	buf = append(buf, `,"output":`...)
	buf = appendJSONRaw(buf, s.Output)
	buf = append(buf, `,"error":`...)
	buf = appendJSONRaw(buf, s.Error)
	buf = append(buf, `,"started_at":`...)
	buf = appendJSONTime(buf, s.StartedAt)
	buf = append(buf, `,"finished_at":`...)
	buf = appendJSONTime(buf, s.FinishedAt)
	buf = append(buf, `,"wake_at":`...)
	buf = appendJSONTime(buf, s.WakeAt)
	buf = append(buf, `,"detail":`...)
	if s.Detail != "" {
		buf = appendJSONString(buf, s.Detail)
	} else {
		buf = append(buf, "null"...)
	}
	if s.until {
		buf = append(buf, `,"iterations":`...)
		buf = strconv.AppendInt(buf, int64(s.Iterations), 10)
	}
	if s.ChildRunID != "" {
		buf = append(buf, `,"child_run_id":`...)
		buf = appendJSONString(buf, s.ChildRunID)
	}
	if o := s.OpenAPI; o != nil {
		buf = append(buf, `,"openapi":{"document":`...)
		buf = appendJSONString(buf, o.Document)
		buf = append(buf, `,"sha256":`...)
		buf = appendJSONString(buf, o.SHA256)
		buf = append(buf, `,"operation":`...)
		buf = appendJSONString(buf, o.Operation)
		buf = append(buf, '}')
	}
	if s.foreach {
		// Foreach steps always have items, an empty list included.
		items := s.Items
		if items == nil {
			items = []ItemView{}
		}
		buf = append(buf, `,"items":[`...)
		for i, it := range items {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = it.appendJSON(buf)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}')
}

// MarshalJSON writes the item as {index, item, status, attempts, output,
// error}.
func (it ItemView) MarshalJSON() ([]byte, error) {
	return it.appendJSON(nil), nil
}

// appendJSON appends the item's JSON form (see MarshalJSON) to buf.
func (it ItemView) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"index":`...)
	buf = strconv.AppendInt(buf, int64(it.Index), 10)
	buf = append(buf, `,"item":`...)
	buf = appendJSONRaw(buf, orNull(it.Item))
	buf = append(buf, `,"status":`...)
	buf = appendJSONString(buf, string(it.Status))
	buf = append(buf, `,"attempts":`...)
	buf = strconv.AppendInt(buf, int64(it.Attempts), 10)
	buf = append(buf, `,"output":`...)
	buf = appendJSONRaw(buf, orNull(it.Output))
	buf = append(buf, `,"error":`...)
	buf = appendJSONRaw(buf, orNull(it.Error))
	return append(buf, '}')
}

// Show assembles the view of a run: every step of its graph (pending when
// it has not begun), with items and iterations folded into their step.
// runID may be any run reference (ResolveRun).
func (e *Engine) Show(ctx context.Context, runID string) (*RunView, error) {
	return e.show(ctx, runID, -1)
}

// ShowFolded is Show with each foreach step's items as totals (StepView.Fold:
// the count of each status and the first maxFailed failed items) in place
// of Items, read without the other item rows (store.Store.StepTops,
// StepItemTotals and StepItems): the view a person reads of a run of many
// items. A foreach step's Output is null in it.
func (e *Engine) ShowFolded(ctx context.Context, runID string, maxFailed int) (*RunView, error) {
	return e.show(ctx, runID, max(maxFailed, 0))
}

// show is Show when fold is negative, ShowFolded with fold failed items
// otherwise.
func (e *Engine) show(ctx context.Context, runID string, fold int) (*RunView, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", runID, err)
	}
	l, err := e.load(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", run.ID, err)
	}
	var steps []store.Step
	if fold < 0 {
		steps, err = e.st.StepList(ctx, run.ID)
	} else {
		steps, err = e.st.StepTops(ctx, run.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", run.ID, err)
	}
	v := &RunView{RunID: run.ID, Workflow: run.Workflow, Version: run.Version, Key: run.Key, Status: run.Status,
		Inputs: orNull(run.Inputs), Outputs: orNull(run.Outputs), Error: orNull(run.Error),
		Steps: map[string]*StepView{}, WaitReason: run.WaitReason, ParentRunID: run.ParentRunID, ParentStep: run.ParentStepKey,
		TraceID: run.Trace.TraceID,
		Attempt: runAttempt(run), RunTimes: RunTimes{CreatedAt: timePtr(run.CreatedAt), StartedAt: timePtr(run.StartedAt), FinishedAt: timePtr(run.FinishedAt),
			DeadlineAt: timePtr(run.DeadlineAt)}}
	if run.Status == store.RunWaiting {
		v.AvailableAt = timePtr(run.AvailableAt)
	}
	if v.Revision, v.Current, err = e.runRevision(ctx, run); err != nil {
		return nil, fmt.Errorf("show run %s: %w", run.ID, err)
	}
	if run.ParentRunID == "" {
		fires, err := e.st.ScheduleFireList(ctx, store.ScheduleFireListParams{RunID: run.ID})
		if err != nil {
			return nil, fmt.Errorf("show run %s: %w", run.ID, err)
		}
		if len(fires) > 0 {
			v.Schedule = &fires[0]
		}
	}
	for _, s := range l.g.Steps {
		v.Order = append(v.Order, s.Name)
		sv := &StepView{Status: store.StepPending, Output: json.RawMessage("null"), foreach: s.Foreach != nil, until: s.Until != nil}
		if h := s.Action.HTTP; h != nil {
			sv.OpenAPI = h.OpenAPI
		}
		v.Steps[s.Name] = sv
	}
	var recorded map[string]*feItems // foreach step → its recorded items
	items := map[string]map[int]*ItemView{}
	comps := map[string]*StepView{}
	for _, s := range steps {
		sv := v.Steps[s.Step]
		if sv == nil && isComp(s.Step) && s.Key == s.Step {
			// A compensation, or the saga: shown after the steps, in the
			// order the saga runs them.
			sv = &StepView{Status: s.Status, Attempts: s.Attempts, Output: orNull(s.Output), Error: nullToNil(s.Error),
				StartedAt: timePtr(s.StartedAt), FinishedAt: timePtr(s.FinishedAt), WakeAt: timePtr(s.WakeAt), Detail: s.Detail}
			comps[s.Step] = sv
			if s.Step == compKey {
				if st := rowStateOf(s); st.Saga != nil {
					v.Order = append(v.Order, compKey)
					v.Steps[compKey] = sv
					for _, name := range st.Saga.Order {
						v.Order = append(v.Order, name+compSuffix)
					}
				}
			}
			continue
		}
		if sv == nil {
			continue // a step of another graph version
		}
		switch {
		case s.Key == s.Step:
			sv.Status, sv.Attempts, sv.Output, sv.Error = s.Status, s.Attempts, orNull(s.Output), nullToNil(s.Error)
			sv.StartedAt, sv.FinishedAt, sv.WakeAt, sv.Detail = timePtr(s.StartedAt), timePtr(s.FinishedAt), timePtr(s.WakeAt), s.Detail
			st := rowStateOf(s)
			if st.Child != "" {
				sv.ChildRunID = st.Child
			}
			if it, err := itemsOf(s.State, run.Inputs); err == nil && it.len() > 0 {
				if recorded == nil {
					recorded = map[string]*feItems{}
				}
				recorded[s.Step] = it
			}
		case s.Index >= 0 && s.Iteration < 0:
			if items[s.Step] == nil {
				items[s.Step] = map[int]*ItemView{}
			}
			items[s.Step][s.Index] = &ItemView{Index: s.Index, Status: s.Status, Attempts: s.Attempts, Output: orNull(s.Output), Error: nullToNil(s.Error)}
		case s.Iteration >= 0:
			if s.Index < 0 && s.Iteration+1 > sv.Iterations {
				sv.Iterations = s.Iteration + 1
				if c := rowStateOf(s).Child; c != "" {
					sv.ChildRunID = c // a workflow step with until: the latest child
				}
			}
		}
	}
	for _, name := range v.Order {
		if isComp(name) && v.Steps[name] == nil {
			sv := comps[name]
			if sv == nil {
				sv = &StepView{Status: store.StepPending, Output: json.RawMessage("null")}
			}
			v.Steps[name] = sv
		}
	}
	for name, m := range items {
		sv := v.Steps[name]
		sum := 0
		for _, it := range m {
			if rec := recorded[name]; rec != nil && it.Index < rec.len() {
				it.Item = mustJSON(rec.at(it.Index))
			}
			sv.Items = append(sv.Items, *it)
			sum += it.Attempts
		}
		sort.Slice(sv.Items, func(i, j int) bool { return sv.Items[i].Index < sv.Items[j].Index })
		sv.Attempts = sum
	}
	if fold >= 0 {
		if err := e.foldItems(ctx, run.ID, v, recorded, fold); err != nil {
			return nil, fmt.Errorf("show run %s: %w", run.ID, err)
		}
	}
	// A run that ended failed or canceled left the steps it never started
	// unsettled: they are canceled (semantics.md §2, §3), not pending, which
	// would read as about to start. They have no stored row to change.
	if run.Status == store.RunFailed || run.Status == store.RunCanceled {
		for _, sv := range v.Steps {
			if sv.Status == store.StepPending {
				sv.Status = store.StepCanceled
			}
			for i := range sv.Items {
				if sv.Items[i].Status == store.StepPending {
					sv.Items[i].Status = store.StepCanceled
				}
			}
			if f := sv.Fold; f != nil && f.Counts[store.StepPending] > 0 {
				f.Counts[store.StepCanceled] += f.Counts[store.StepPending]
				delete(f.Counts, store.StepPending)
			}
		}
	}
	return v, nil
}

// foldItems sets the Fold of each step of v that has item rows from their
// totals by status, with the first fold failed items read whole, and the
// step's Attempts to the sum of its items'.
func (e *Engine) foldItems(ctx context.Context, runID string, v *RunView, recorded map[string]*feItems, fold int) error {
	totals, err := e.st.StepItemTotals(ctx, runID)
	if err != nil {
		return err
	}
	for _, t := range totals {
		sv := v.Steps[t.Step]
		if sv == nil {
			continue // a step of another graph version
		}
		if sv.Fold == nil {
			sv.Fold = &ItemFold{Counts: map[store.StepStatus]int{}}
			sv.Attempts = 0
		}
		sv.Fold.Counts[t.Status] += t.Items
		sv.Attempts += t.Attempts
	}
	for _, name := range v.Order {
		sv := v.Steps[name]
		if sv.Fold == nil || sv.Fold.Counts[store.StepFailed] == 0 || fold == 0 {
			continue
		}
		rows, err := e.st.StepItems(ctx, store.StepItemsParams{RunID: runID, Step: name, Status: store.StepFailed, Limit: fold})
		if err != nil {
			return err
		}
		for _, s := range rows {
			it := ItemView{Index: s.Index, Status: s.Status, Attempts: s.Attempts, Output: orNull(s.Output), Error: nullToNil(s.Error)}
			if rec := recorded[name]; rec != nil && it.Index < rec.len() {
				it.Item = mustJSON(rec.at(it.Index))
			}
			sv.Fold.Failed = append(sv.Fold.Failed, it)
		}
	}
	return nil
}

// StatusOf maps a run status to the CLI exit code: completed 0, failed or
// canceled 1, parked (waiting, pending, running elsewhere) 3, blocked on a
// version decision 4.
func StatusOf(s store.RunStatus) int {
	switch s {
	case store.RunCompleted:
		return 0
	case store.RunFailed, store.RunCanceled:
		return 1
	case store.RunBlocked:
		return 4
	}
	return 3
}

// runAttempt is run.attempt: 1 + the number of redrives.
func runAttempt(run store.Run) int { return max(run.Attempt, 1) }

// rowStateOf decodes a stored step row's engine state (empty when none).
func rowStateOf(s store.Step) rowState {
	var st rowState
	if len(s.State) > 0 {
		_ = json.Unmarshal(s.State, &st)
	}
	return st
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func nullToNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

// timePtr is t as a view holds it: in UTC, to the millisecond (the JSON
// form's precision, so that durations printed from a view read from a
// server are those printed locally), or nil when t is zero.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC().Truncate(time.Millisecond)
	return &u
}

// runRevision returns the revision of its development version run is
// bound to and the version's current revision, when the version was
// replaced at least once; 0, 0 otherwise (and for a released version,
// without a read).
func (e *Engine) runRevision(ctx context.Context, run store.Run) (int, int, error) {
	if sv, err := graph.ParseVersion(run.Version); err != nil || sv.Major != 0 {
		return 0, 0, nil
	}
	head, err := e.versionHead(ctx, run.Workflow, run.Version)
	if errors.Is(err, store.ErrNotFound) || err == nil && head.Revision <= 1 {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if head.Hash == run.GraphHash {
		return head.Revision, head.Revision, nil
	}
	v, err := e.st.VersionGetByHash(ctx, run.Workflow, run.GraphHash)
	if errors.Is(err, store.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading the revision of version %s: %w", run.Version, err)
	}
	return v.Revision, head.Revision, nil
}

// ShowItems returns a page of a foreach step's items, from index from and
// at most limit of them, with the values they were given, reading only
// that page of item rows (a step of 100,000 items is not read whole).
// runID may be any run reference.
func (e *Engine) ShowItems(ctx context.Context, runID, step string, from, limit int) ([]ItemView, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("show the items of run %s: %w", runID, err)
	}
	tops, err := e.st.StepTops(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("show the items of run %s: %w", run.ID, err)
	}
	var rec *feItems
	for _, s := range tops {
		if s.Key == step {
			if it, err := itemsOf(s.State, run.Inputs); err == nil && it.len() > 0 {
				rec = it
			}
		}
	}
	rows, err := e.st.StepItems(ctx, store.StepItemsParams{RunID: run.ID, Step: step, From: max(from, 0), Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("show the items of step %s of run %s: %w", step, run.ID, err)
	}
	out := make([]ItemView, 0, len(rows))
	for _, s := range rows {
		it := ItemView{Index: s.Index, Status: s.Status, Attempts: s.Attempts, Output: orNull(s.Output), Error: nullToNil(s.Error)}
		if rec != nil && it.Index < rec.len() {
			it.Item = mustJSON(rec.at(it.Index))
		}
		out = append(out, it)
	}
	return out, nil
}
