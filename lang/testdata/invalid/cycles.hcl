workflow "cycles" {
  version = "1.0.0"

  step "a" {
    when = "steps.b.status == 'completed'" # ERROR: Dependency cycle
    set { x = 1 }
  }

  step "b" {
    depends_on = [step.a]
    set { x = 1 }
  }

  step "c" {
    depends_on = [step.e] # ERROR: Dependency cycle
    set { x = 1 }
  }

  step "d" {
    depends_on = [step.c]
    set { x = 1 }
  }

  step "e" {
    set {
      v = "{{ steps.d.output.x }}"
    }
  }
}
