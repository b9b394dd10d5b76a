package interp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func TestParseRunRef(t *testing.T) {
	for text, want := range map[string]RunRef{
		"01KB":              {Kind: RefID, Text: "01KB", ID: "01KB"},
		"@last":             {Kind: RefLast, Text: "@last"},
		"ship-order@last":   {Kind: RefWorkflowLast, Text: "ship-order@last", Workflow: "ship-order"},
		"ship-order/A-1":    {Kind: RefWorkflowKey, Text: "ship-order/A-1", Workflow: "ship-order", Key: "A-1"},
		"deploy/web/1.4.0":  {Kind: RefWorkflowKey, Text: "deploy/web/1.4.0", Workflow: "deploy", Key: "web/1.4.0"},
		"deploy/key@last":   {Kind: RefWorkflowKey, Text: "deploy/key@last", Workflow: "deploy", Key: "key@last"},
		"0zzzz-nope":        {Kind: RefID, Text: "0zzzz-nope", ID: "0zzzz-nope"},
		"01KBXYZ0000000000": {Kind: RefID, Text: "01KBXYZ0000000000", ID: "01KBXYZ0000000000"},
	} {
		got, err := ParseRunRef(text)
		if err != nil || got != want {
			t.Errorf("ParseRunRef(%q) = %+v, %v; want %+v", text, got, err, want)
		}
	}
	for text, msg := range map[string]string{
		"":         "the run reference is empty",
		"@first":   `"@first": the only @ reference is @last`,
		"wf@":      `"wf@": the only @ reference is @last`,
		"/k":       `"/k" names no workflow before the /`,
		"wf/":      `"wf/" names no key after the /`,
		"9wf/k":    `"9wf/k": "9wf" is not a workflow name`,
		"a b@last": `"a b@last": "a b" is not a workflow name`,
	} {
		_, err := ParseRunRef(text)
		var re *RunRefError
		if !errors.As(err, &re) || re.Problem != RefInvalid || !errors.Is(err, ErrInvalidRunRef) || re.Message != msg {
			t.Errorf("ParseRunRef(%q) = %v; want the invalid reference %q", text, err, msg)
		}
	}
}

func TestCanonicalRunID(t *testing.T) {
	for in, want := range map[string]string{
		"01kbxyz":    "01KBXYZ",
		"oLi":        "011",
		"0zzzz-nope": "0zzzz-nope", // not base32: as it is
		"01u":        "01u",        // U is not in Crockford's alphabet
		"ÿ":          "ÿ",
	} {
		if got := CanonicalRunID(in); got != want {
			t.Errorf("CanonicalRunID(%q) = %q, want %q", in, got, want)
		}
	}
	if got := canonicalLead("0zzzz-nope"); got != "0ZZZZ" {
		t.Errorf("canonicalLead = %q, want 0ZZZZ", got)
	}
}

func TestResolveRun(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "ship-order" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
}
workflow "build" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
}`)
	// Ids chosen to share prefixes; created one minute apart, in order.
	runs := []struct{ id, wf, key string }{
		{"01AAAA0000", "ship-order", "A-1"},
		{"01AAAB0000", "ship-order", "A-2"},
		{"01AAAB1111", "build", "main"},
		{"01AAAC0000", "ship-order", "A-1"},
		{"01ZZZZ0000", "build", "release"},
	}
	for i, r := range runs {
		if _, err := b.st.RunInsert(b.ctx, store.RunInsertParams{ID: r.id, Workflow: r.wf, Version: "1.0.0", GraphHash: "h",
			Key: r.key, Now: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	for ref, want := range map[string]string{
		"01AAAA0000":      "01AAAA0000", // a full id
		"01AAAA":          "01AAAA0000", // a unique prefix
		"olaaac":          "01AAAC0000", // any case, O for 0, L for 1
		"@last":           "01ZZZZ0000",
		"ship-order@last": "01AAAC0000",
		"build@last":      "01ZZZZ0000",
		"ship-order/A-1":  "01AAAC0000", // the newest run with the key
		"ship-order/A-2":  "01AAAB0000",
		"build/main":      "01AAAB1111",
	} {
		got, err := b.e.ResolveRun(b.ctx, ref)
		if err != nil || got.ID != want {
			t.Errorf("ResolveRun(%q) = %s, %v; want %s", ref, got.ID, err, want)
		}
	}

	ids := func(rs []store.RunSummary) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID)
		}
		return strings.Join(s, " ")
	}
	check := func(ref string, problem RunRefProblem, sentinel error, msg, cands, workflows string) {
		t.Helper()
		_, err := b.e.ResolveRun(b.ctx, ref)
		var re *RunRefError
		if !errors.As(err, &re) {
			t.Fatalf("ResolveRun(%q) = %v; want a RunRefError", ref, err)
		}
		if re.Problem != problem || !errors.Is(err, sentinel) || re.Message != msg {
			t.Errorf("ResolveRun(%q): problem %d, %q; want %d, %q (%v)", ref, re.Problem, re.Message, problem, msg, sentinel)
		}
		if got := ids(re.Candidates); got != cands {
			t.Errorf("ResolveRun(%q): candidates %q, want %q", ref, got, cands)
		}
		if got := strings.Join(re.Workflows, " "); got != workflows {
			t.Errorf("ResolveRun(%q): workflows %q, want %q", ref, got, workflows)
		}
	}
	// Ambiguous: the runs the prefix matches, newest first.
	check("01AAA", RefAmbiguous, store.ErrAmbiguous, `"01AAA" is the start of more than one run id`,
		"01AAAC0000 01AAAB1111 01AAAB0000 01AAAA0000", "")
	check("01aaab", RefAmbiguous, store.ErrAmbiguous, `"01aaab" is the start of more than one run id`,
		"01AAAB1111 01AAAB0000", "")
	// No match: the runs sharing the longest prefix with it.
	check("01AAAD", RefNoMatch, store.ErrNotFound, `no run has an id starting with "01AAAD"`,
		"01AAAC0000 01AAAB1111 01AAAB0000 01AAAA0000", "")
	check("01AAAB2", RefNoMatch, store.ErrNotFound, `no run has an id starting with "01AAAB2"`,
		"01AAAB1111 01AAAB0000", "")
	check("01zq", RefNoMatch, store.ErrNotFound, `no run has an id starting with "01zq"`, "01ZZZZ0000", "")
	check("XYZ", RefNoMatch, store.ErrNotFound, `no run has an id starting with "XYZ"`, "", "")
	// A workflow's name where a run is meant.
	check("build", RefNoMatch, store.ErrNotFound, `no run has an id starting with "build"`, "", "build")
	// Workflows and keys: the nearest names and keys.
	check("shiporder@last", RefNoMatch, store.ErrNotFound, `no workflow "shiporder" is stored`, "", "ship-order build")
	check("ship-order/A-3", RefNoMatch, store.ErrNotFound, `workflow "ship-order" has no run with key "A-3"`,
		"01AAAC0000 01AAAB0000", "")
	check("biuld/main", RefNoMatch, store.ErrNotFound, `no workflow "biuld" is stored`, "", "build ship-order")
	check("@first", RefInvalid, ErrInvalidRunRef, `"@first": the only @ reference is @last`, "", "")

	// A stored workflow without runs, and a store without runs.
	b2 := setup(t)
	b2.compile(`
workflow "idle" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
}`)
	b = b2
	check("idle@last", RefNoMatch, store.ErrNotFound, `workflow "idle" has no runs`, "", "")
	check("@last", RefNoMatch, store.ErrNotFound, "@last names the newest run, and there are no runs", "", "")
	check("idle/k", RefNoMatch, store.ErrNotFound, `workflow "idle" has no run with key "k"`, "", "")
}

// The engine's verbs take any run reference.
func TestVerbsTakeRunRefs(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "approve" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "approval" }
  }
}`)
	run := b.start("approve", nil)
	b.drive(run.ID)
	if got, err := b.e.WaitingSignals(b.ctx, "approve@last"); err != nil || strings.Join(got, " ") != "approval" {
		t.Fatalf("WaitingSignals(approve@last) = %q, %v; want approval", got, err)
	}
	if _, err := b.e.Signal(b.ctx, "approve@last", "approval", nil); err != nil {
		t.Fatalf("Signal(approve@last): %v", err)
	}
	if run = b.drive(run.ID); run.Status != store.RunCompleted {
		t.Fatalf("the run is %s after its signal", run.Status)
	}
	if got, err := b.e.WaitingSignals(b.ctx, run.ID); err != nil || len(got) != 0 {
		t.Fatalf("WaitingSignals of a completed run = %q, %v; want none", got, err)
	}
	if v, err := b.e.Show(b.ctx, "@last"); err != nil || v.RunID != run.ID {
		t.Fatalf("Show(@last) = %v, %v", v, err)
	}
	_, err := b.e.Cancel(b.ctx, "nope@last")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Cancel(nope@last) = %v; want not found", err)
	}
}
