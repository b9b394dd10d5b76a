# Every completed run of this workflow starts a, b and c, and no other step
# for sure, so limits.attempts = 3 is enough: no warning (semantics §14).
workflow "steps_within_limit" {
  version = "1.0.0"
  limits {
    attempts = 3
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
