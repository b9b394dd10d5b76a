# Every completed run of this workflow starts a, b and c (3 steps), and
# limits.attempts is 2: it compiles, with a warning on the limit
# (semantics §14). The other steps are not counted: a when, a switch or a
# step waited for may leave them unstarted.
workflow "steps_over_limit" {
  version = "1.0.0"
  limits {
    attempts = 2 # WARNING: Workflow exceeds limits.attempts
  }
  step "a" {
    set { v = 1 }
  }
  step "b" {
    depends_on = [step.a]
    set { v = 2 }
  }
  step "c" {
    depends_on = [step.b]
    switch {
      case {
        when = "steps.a.output.v > 1"
        next = [step.chosen]
      }
    }
  }
  step "chosen" {
    set { v = 3 }
  }
  step "maybe" {
    when = "steps.b.output.v > 2"
    set { v = 4 }
  }
  step "after_maybe" {
    depends_on = [step.maybe]
    set { v = 5 }
  }
}
