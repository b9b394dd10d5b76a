package graph

// Workflow versions and child-workflow version pins.

import (
	"fmt"
	"strconv"
	"strings"
)

// SemVer is a workflow version, MAJOR.MINOR.PATCH. flowrun versions have no
// "v" prefix, no pre-release and no build metadata: a version is a promise
// about what changed (see Diff), nothing more.
type SemVer struct {
	Major, Minor, Patch int
}

// ParseVersion parses a workflow version: exactly three dot-separated whole
// numbers, each 0 or without leading zeros ("1.4.0", "0.1.12"). Anything
// else ("v1.4.0", "1.4", "1.04.0", "1.4.0-rc1") is an error whose text says
// the expected form.
func ParseVersion(s string) (SemVer, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return SemVer{}, fmt.Errorf("version %q is not valid: expected MAJOR.MINOR.PATCH, three whole numbers such as \"1.4.0\"", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := semverPart(p)
		if err != nil {
			return SemVer{}, fmt.Errorf("version %q is not valid: %s; expected MAJOR.MINOR.PATCH, three whole numbers such as \"1.4.0\"", s, err)
		}
		n[i] = v
	}
	return SemVer{n[0], n[1], n[2]}, nil
}

// semverPart parses one component: digits only, no leading zero unless
// it is 0, at most 9 digits (so it fits any int).
func semverPart(p string) (int, error) {
	if p == "" {
		return 0, fmt.Errorf("a part is empty")
	}
	for _, r := range p {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%q is not a whole number", p)
		}
	}
	if len(p) > 1 && p[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", p)
	}
	if len(p) > 9 {
		return 0, fmt.Errorf("%q is too large", p)
	}
	return strconv.Atoi(p)
}

// String renders the version as MAJOR.MINOR.PATCH.
func (v SemVer) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// Compare returns -1, 0 or +1 as v is lower than, equal to or higher than w.
func (v SemVer) Compare(w SemVer) int {
	for _, d := range [3]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

// BumpTo returns the bump that going from v to the higher version w
// declares: MAJOR when the major number differs, else MINOR when the minor
// number differs, else PATCH when the patch number differs, else none. It
// does not look at direction; callers compare first.
func (v SemVer) BumpTo(w SemVer) Bump {
	switch {
	case v.Major != w.Major:
		return BumpMajor
	case v.Minor != w.Minor:
		return BumpMinor
	case v.Patch != w.Patch:
		return BumpPatch
	}
	return BumpNone
}

// Next returns the lowest version after v that declares bump b: 1.2.3 gives
// 2.0.0 for MAJOR, 1.3.0 for MINOR, 1.2.4 for PATCH, and itself for none.
func (v SemVer) Next(b Bump) SemVer {
	switch b {
	case BumpMajor:
		return SemVer{v.Major + 1, 0, 0}
	case BumpMinor:
		return SemVer{v.Major, v.Minor + 1, 0}
	case BumpPatch:
		return SemVer{v.Major, v.Minor, v.Patch + 1}
	}
	return v
}

// Pin is a child workflow's version pin: "1" accepts any 1.x.y, "1.2" any
// 1.2.y, "1.2.3" exactly that version. The child run uses the highest
// stored version the pin matches.
type Pin struct {
	Major, Minor, Patch int
	// Parts is how many components the pin gives: 1, 2 or 3.
	Parts int
}

// ParsePin parses a pin: one, two or three dot-separated whole numbers,
// each 0 or without leading zeros.
func ParsePin(s string) (Pin, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return Pin{}, fmt.Errorf("version pin %q is not valid: expected MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, such as \"1\" or \"1.2\"", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := semverPart(p)
		if err != nil {
			return Pin{}, fmt.Errorf("version pin %q is not valid: %s; expected MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, such as \"1\" or \"1.2\"", s, err)
		}
		n[i] = v
	}
	return Pin{Major: n[0], Minor: n[1], Patch: n[2], Parts: len(parts)}, nil
}

// Matches reports whether version v satisfies the pin.
func (p Pin) Matches(v SemVer) bool {
	switch p.Parts {
	case 1:
		return v.Major == p.Major
	case 2:
		return v.Major == p.Major && v.Minor == p.Minor
	case 3:
		return v == SemVer{p.Major, p.Minor, p.Patch}
	}
	return false
}

// String renders the pin as written: "1", "1.2" or "1.2.3".
func (p Pin) String() string {
	switch p.Parts {
	case 1:
		return strconv.Itoa(p.Major)
	case 2:
		return fmt.Sprintf("%d.%d", p.Major, p.Minor)
	}
	return fmt.Sprintf("%d.%d.%d", p.Major, p.Minor, p.Patch)
}

// CheckBump checks the version promise of new against old, a stored graph
// of the same workflow (both sealed). It returns the bump the changes
// require and the changes, and an error when:
//
//   - either version is not MAJOR.MINOR.PATCH, the workflows differ, or a
//     graph is not sealed (plain error);
//   - new's version is lower than old's (*BumpError);
//   - the versions are equal but the graph hashes differ (*BumpError);
//   - new's version declares a smaller bump than the changes require
//     (*BumpError listing each change and its bump).
//
// A larger bump than required is accepted, and so is the same version with
// the same hash (applying an unchanged file again).
func CheckBump(old, new *Graph) (required Bump, changes []Change, err error) {
	if old == nil || new == nil {
		return BumpNone, nil, fmt.Errorf("check version bump: a graph is nil")
	}
	if old.Workflow != new.Workflow {
		return BumpNone, nil, fmt.Errorf("check version bump: the graphs are of different workflows (%q and %q); compare versions of one workflow", old.Workflow, new.Workflow)
	}
	ov, err := ParseVersion(old.Version)
	if err != nil {
		return BumpNone, nil, fmt.Errorf("check version bump of workflow %q: stored %w", old.Workflow, err)
	}
	nv, err := ParseVersion(new.Version)
	if err != nil {
		return BumpNone, nil, fmt.Errorf("check version bump of workflow %q: %w", new.Workflow, err)
	}
	changes = Diff(old, new)
	required = RequiredBump(changes)
	be := &BumpError{Workflow: new.Workflow, Old: ov, New: nv, Declared: ov.BumpTo(nv), Required: required, Changes: changes}
	switch c := nv.Compare(ov); {
	case c < 0:
		be.Reason = BumpLower
		return required, changes, be
	case c == 0:
		oh, err := Hash(old)
		if err != nil {
			return required, changes, fmt.Errorf("check version bump: stored graph: %w", err)
		}
		nh, err := Hash(new)
		if err != nil {
			return required, changes, fmt.Errorf("check version bump: %w", err)
		}
		if oh != nh {
			be.Reason = BumpSameVersion
			return required, changes, be
		}
		return required, changes, nil
	}
	if be.Declared < required {
		be.Reason = BumpTooSmall
		return required, changes, be
	}
	return required, changes, nil
}

// BumpReason says which version rule a BumpError broke.
type BumpReason int

// The rules of CheckBump.
const (
	// BumpLower: the new version is lower than the stored one.
	BumpLower BumpReason = iota + 1
	// BumpSameVersion: the version is stored with a different graph.
	BumpSameVersion
	// BumpTooSmall: the declared bump is smaller than the changes require.
	BumpTooSmall
)

// BumpError is the error CheckBump returns when a version breaks its
// promise. Its message names each change and the bump it needs, and the
// lowest version that would be accepted.
type BumpError struct {
	Workflow string
	Old, New SemVer
	// Declared is the bump from Old to New; Required what Changes need.
	Declared, Required Bump
	Changes            []Change
	Reason             BumpReason
}

// Suggested returns the lowest version that CheckBump would accept.
func (e *BumpError) Suggested() SemVer {
	return e.Old.Next(max(e.Required, BumpPatch))
}

// Error renders the broken rule, the fix, and one change per line.
func (e *BumpError) Error() string {
	var b strings.Builder
	switch e.Reason {
	case BumpLower:
		fmt.Fprintf(&b, "workflow %q version %s is lower than the stored version %s; versions only go up: set version to %s or later", e.Workflow, e.New, e.Old, e.Suggested())
	case BumpSameVersion:
		fmt.Fprintf(&b, "workflow %q version %s is already stored with a different graph; the changes need a %s bump: set version to %s or later", e.Workflow, e.New, e.Required, e.Suggested())
	default:
		fmt.Fprintf(&b, "workflow %q version %s declares a %s change from %s, but the changes need %s: set version to %s or later", e.Workflow, e.New, e.Declared, e.Old, e.Required, e.Suggested())
	}
	for _, c := range e.Changes {
		b.WriteString("\n  ")
		b.WriteString(c.String())
	}
	return b.String()
}
