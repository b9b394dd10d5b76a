workflow "cel-types" {
  version = "1.0.0"
  input "count" { type = number }
  input "name" { type = string }

  step "a" {
    when = "input.count" # ERROR: Type mismatch
    set {
      total = "{{ input.count * 2 }}"
    }
  }

  step "b" {
    foreach {
      items = "input.name" # ERROR: Type mismatch
    }
    set { v = 1 }
  }

  step "c" {
    set {
      v = "{{ steps.a.output.total + 'a' }}" # ERROR: Type mismatch
    }
  }

  step "d" {
    until = "steps.d.output.v" # ERROR: Type mismatch
    set { v = "x" }
  }

  step "e" {
    retry {
      when = "error.status" # ERROR: Type mismatch
    }
    exec { command = ["true"] }
  }
}
