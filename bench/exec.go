package bench

import (
	"context"
	"time"

	"github.com/flowrun/flowrun/interp"
)

// execScenario runs a chain of exec steps running true, against spawning
// true directly: the per-step overhead beyond the spawn itself must stay
// under 1 ms. A durable exec step costs at least one commit (its start and
// the previous step's end, fsynced before the program runs) next to its
// spawn; the floor figure measures that pair with raw SQL, and the last
// figure is what flowrun adds on top of it.
func execScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(1000, 20)
	r.Sizes["steps"] = n
	spawn, err := spawnTrue(ctx, n)
	if err != nil {
		return err
	}
	raw, err := rawCommits(ctx, dir, "FULL", c.n(1000, 100))
	if err != nil {
		return err
	}
	floor, err := rawCommitSpawn(ctx, dir, "FULL", n)
	if err != nil {
		return err
	}
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{})
	if err != nil {
		return err
	}
	defer h.close()
	if _, err := h.compile(ctx, execChain("exec", n)); err != nil {
		return err
	}
	run, err := h.start(ctx, "exec", nil)
	if err != nil {
		return err
	}
	start := now()
	if _, err := h.drive(ctx, run); err != nil {
		return err
	}
	per := now().Sub(start) / time.Duration(n)
	spawnB := Baseline{Name: "spawning true with os/exec", Value: ms(spawn), Unit: "ms"}
	r.figure(Figure{Name: "time per exec step", Value: ms(per), Unit: "ms", Baseline: &spawnB})
	r.figure(Figure{Name: "per-step overhead beyond the spawn", Value: ms(per - spawn), Unit: "ms",
		Baseline: ptr(commitMS(raw)), Target: &Target{Of: "value", Op: "<=", Limit: 1}})
	r.figure(Figure{Name: "floor: a raw single-row commit then a spawn", Value: ms(floor), Unit: "ms", Baseline: &spawnB})
	r.figure(Figure{Name: "per-step time beyond that floor", Value: ms(per - floor), Unit: "ms", Baseline: ptr(commitMS(raw))})
	return nil
}
