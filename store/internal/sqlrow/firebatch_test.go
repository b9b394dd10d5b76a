package sqlrow

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// fakeFireTx records the statements FireBatch runs and fails the fires of
// the slots named in fail.
type fakeFireTx struct {
	log  []string
	fail map[string]error // "schedule@minute" → the fire's error
}

func (f *fakeFireTx) Savepoint() error  { f.log = append(f.log, "savepoint"); return nil }
func (f *fakeFireTx) RollbackTo() error { f.log = append(f.log, "rollback"); return nil }
func (f *fakeFireTx) Release() error    { f.log = append(f.log, "release"); return nil }
func (f *fakeFireTx) Fire(p store.ScheduleFireParams) (store.ScheduleFireResult, error) {
	k := fmt.Sprintf("%s@%d", p.Name, p.Slot.Minute())
	f.log = append(f.log, "fire "+k)
	if err := f.fail[k]; err != nil {
		return store.ScheduleFireResult{}, err
	}
	return store.ScheduleFireResult{Run: store.Run{ID: "run-" + k}}, nil
}
func (f *fakeFireTx) Aborts(err error) bool           { return errors.Is(err, errAbort) }
func (f *fakeFireTx) Fail(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }

var errAbort = errors.New("deadlock")

func fireAt(name string, minute int) store.ScheduleFireParams {
	return store.ScheduleFireParams{Workflow: "wf", Version: "1.0.0", Name: name,
		Slot: time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC),
		Run:  store.RunInsertParams{Workflow: "wf", Version: "1.0.0"}}
}

// TestFireBatch: fires go in FireOrder, each in its own savepoint; a failed
// fire is rolled back alone and stops the later slots of its schedule only,
// except a slot fired already; an error that aborts the transaction ends
// the batch.
func TestFireBatch(t *testing.T) {
	ps := []store.ScheduleFireParams{fireAt("b", 1), fireAt("a", 3), fireAt("a", 1), fireAt("a", 2), fireAt("b", 2), fireAt("c", 1), fireAt("c", 2)}
	ps = append(ps, store.ScheduleFireParams{Workflow: "wf", Name: "d"}) // no slot: refused by Check
	tx := &fakeFireTx{fail: map[string]error{
		"a@2": errors.New("constraint failed"),
		"c@1": store.ErrAlreadyFired,
	}}
	out, err := FireBatch(tx, ps)
	if err != nil {
		t.Fatal(err)
	}
	want := "savepoint,fire a@1,release,savepoint,fire a@2,rollback,release," +
		"savepoint,fire b@1,release,savepoint,fire b@2,release," +
		"savepoint,fire c@1,rollback,release,savepoint,fire c@2,release"
	if got := strings.Join(tx.log, ","); got != want {
		t.Errorf("statements:\n got %s\nwant %s", got, want)
	}
	for i, w := range []struct {
		run string
		err error
	}{{"run-b@1", nil}, {"", store.ErrNotTried}, {"run-a@1", nil}, {"", nil}, {"run-b@2", nil}, {"", store.ErrAlreadyFired}, {"run-c@2", nil}, {"", nil}} {
		o := out[i]
		if o.Result.Run.ID != w.run {
			t.Errorf("outcome %d (%s): run %q, want %q", i, ps[i].Name, o.Result.Run.ID, w.run)
		}
		if w.err != nil && !errors.Is(o.Err, w.err) {
			t.Errorf("outcome %d (%s): %v, want %v", i, ps[i].Name, o.Err, w.err)
		}
	}
	if out[3].Err == nil || !strings.Contains(out[3].Err.Error(), "firing schedule wf/a at") {
		t.Errorf("the failed fire's outcome is %v, want it named by FireOp", out[3].Err)
	}
	if out[7].Err == nil || !strings.Contains(out[7].Err.Error(), "needs its slot") {
		t.Errorf("a fire without a slot: %v", out[7].Err)
	}

	tx = &fakeFireTx{fail: map[string]error{"a@1": errAbort}}
	if out, err := FireBatch(tx, ps[:3]); !errors.Is(err, errAbort) || out != nil {
		t.Errorf("an aborted transaction: %v, %v; want the abort and no outcomes", out, err)
	}
	if got := strings.Join(tx.log, ","); got != "savepoint,fire a@1" {
		t.Errorf("after an abort FireBatch went on: %s", got)
	}
}
