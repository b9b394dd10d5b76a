package interp

// emit: an http action that sends a CloudEvent (spec 1.0). Its id is the
// step key's idempotency key (RUN_ID/STEP_KEY unless the step sets one),
// so a retried or re-run emit sends the same event id and a receiver that
// dedupes on source and id takes it once; its time is the engine clock's
// when the attempt is prepared (language.md §8.11).

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// prepareEmit evaluates the event of an emit step and makes c send it:
// as one application/cloudevents+json body (structured), or as ce-
// headers with the data as the body (binary).
func (sc *scheduler) prepareEmit(ctx context.Context, c *httpCall, e *graph.EmitSpec, a *expr.Activation, id string, attempt int) *stepError {
	text := func(what string, v *graph.Value) (string, *stepError) {
		return sc.evalText(ctx, v, a, "emit "+what)
	}
	typ, se := text("type", e.Type)
	if se != nil {
		return se
	}
	source, se := text("source", e.Source)
	if se != nil {
		return se
	}
	subject, se := text("subject", e.Subject)
	if se != nil {
		return se
	}
	if typ == "" || source == "" {
		return &stepError{Kind: "expression", Message: "the emitted event's type and source must not be empty"}
	}
	ev := map[string]any{
		"specversion": "1.0", "id": id, "source": source, "type": typ,
		"time": sc.now.UTC().Format(time.RFC3339Nano), "flowrunattempt": strconv.Itoa(attempt),
	}
	if subject != "" {
		ev["subject"] = subject
	}
	var data any
	if e.Data != nil {
		v, err := sc.evalValue(ctx, e.Data, a)
		if err != nil {
			return &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate emit data: %v", err)}
		}
		data = v
		ev["data"] = v
		if _, isText := v.(string); isText {
			ev["datacontenttype"] = "text/plain; charset=utf-8"
		} else {
			ev["datacontenttype"] = "application/json"
		}
	}
	c.event = ev
	if !e.Binary {
		c.body, c.hasBody = mustJSON(ev), true
		c.headers["Content-Type"] = "application/cloudevents+json; charset=utf-8"
		return nil
	}
	for k, v := range ev {
		if k == "data" || k == "datacontenttype" {
			continue
		}
		c.headers["ce-"+k] = v.(string)
	}
	if e.Data != nil {
		c.headers["Content-Type"] = ev["datacontenttype"].(string)
		if s, ok := data.(string); ok {
			c.body = []byte(s)
		} else {
			c.body = mustJSON(data)
		}
		c.hasBody = true
	}
	return nil
}
