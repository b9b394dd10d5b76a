# A set field whose value has an error is still a field: a step that reads
# it gets no second error saying it does not exist.
workflow "set_field_error" {
  version = "1.0.0"
  input "n" { type = number }

  step "a" {
    set {
      x = "{{ input.n + }}" # ERROR: Invalid expression
      y = 3
    }
  }

  step "only" {
    set {
      z = "{{ input.m }}" # ERROR: Unknown input
    }
  }

  step "b" {
    set {
      v = "{{ steps.a.output.x }}"
      w = "{{ steps.only.output.z }}"
      u = "{{ steps.a.output.q }}" # ERROR: Unknown field
    }
  }
}
