workflow "scopes" {
  version = "1.0.0"

  step "a" {
    when = "item > 1" # ERROR: Variable not visible here
    set { x = 1 }
  }

  step "b" {
    when = "error.kind == 'timeout'" # ERROR: Variable not visible here
    set { x = 1 }
  }

  step "c" {
    set {
      e = "{{ event.kind }}" # ERROR: Variable not visible here
    }
  }

  step "d" {
    foreach {
      items = "item" # ERROR: Variable not visible here
    }
    set { x = 1 }
  }
}
