# A foreach over a literal list longer than limits.attempts compiles, with a
# warning: the step would fail before its first item (semantics §14).
workflow "foreach_over_limit" {
  version = "1.0.0"
  limits {
    attempts = 3
  }
  step "each" {
    foreach {
      items = "[1, 2, 3, 4]" # WARNING: Foreach exceeds limits.attempts
    }
    set { v = "{{ item }}" }
  }
  step "fits" {
    foreach {
      items = "[1, 2]"
    }
    set { v = "{{ item }}" }
  }
}
