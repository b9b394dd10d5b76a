package cli

import (
	"fmt"

	"github.com/flowrun/flowrun/lang"
)

// This file is what apply says of a workflow's webhooks (spec/language.md
// §9.2): like a schedule, a webhook starts runs by itself, so apply of
// such a workflow stores it and starts none (unless --run), and names the
// route flowrun serve answers the webhook at.

// printWebhooks prints, for every webhook of mod, where flowrun serve
// answers it.
func (e *env) printWebhooks(mod *lang.Module) {
	for _, w := range mod.Workflows {
		for _, h := range w.Graph.Webhooks {
			fmt.Fprintf(e.stderr, "flowrun apply: webhook %s/%s is served by flowrun serve at POST /hooks/%s/%s (signature in %s)\n",
				w.Name, h.Name, w.Name, h.Name, h.Signature)
		}
	}
}

// startersOf names what starts the runs of mod's workflows by itself:
// "schedules", "webhooks" or "schedules and webhooks".
func startersOf(mod *lang.Module) string {
	var sched, hooks bool
	for _, w := range mod.Workflows {
		sched = sched || len(w.Graph.Schedules) > 0
		hooks = hooks || len(w.Graph.Webhooks) > 0
	}
	switch {
	case sched && hooks:
		return "schedules and webhooks"
	case hooks:
		return "webhooks"
	}
	return "schedules"
}

// startersDo says what apply does with them.
func startersDo(mod *lang.Module) string {
	switch startersOf(mod) {
	case "webhooks":
		return "stores it for flowrun serve"
	case "schedules and webhooks":
		return "activates the schedules, stores it for flowrun serve,"
	}
	return "activates them"
}
