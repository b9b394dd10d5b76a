workflow "self" {
  version = "1.0.0"

  step "a" {
    when = "steps.a.status != 'completed'" # ERROR: Self-reference
    set { x = 1 }
  }

  step "b" {
    set {
      again = "{{ steps.b.output.again }}" # ERROR: Self-reference
    }
  }

  step "c" {
    depends_on = [step.c] # ERROR: Self-reference
    set { x = 1 }
  }
}
