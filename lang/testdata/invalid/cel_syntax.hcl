workflow "cel-syntax" {
  version = "1.0.0"
  input "x" { type = number }

  step "a" {
    when = "input.x >" # ERROR: Invalid expression
    set {
      v = "{{ input.x + }}" # ERROR: Invalid expression
      w = "{{ input.x" # ERROR: Unclosed template expression
      y = "a {{ }} b" # ERROR: Empty template expression
    }
  }

  step "b" {
    when = "" # ERROR: Empty expression
    set { v = 1 }
  }

  step "c" {
    until = "(input.x == 1" # ERROR: Invalid expression
    set { v = 1 }
  }
}
