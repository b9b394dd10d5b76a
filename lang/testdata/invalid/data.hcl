workflow "data" {
  version = "1.0.0"
  input "x" { type = string }
  input "tags" { type = list(string) }

  step "a" {
    set {
      bare = input.x # ERROR: Reference not allowed
      call = upper("x") # ERROR: Unsupported expression
    }
  }

  step "b" {
    exec {
      command = ["env"]
      env     = { TAGS = ["a", "b"] } # ERROR: Incorrect value type
    }
  }

  step "c" {
    http {
      url = "{{ input.tags }}" # ERROR: Incorrect value type
    }
  }

  step "d" {
    workflow {
      name    = "child" # ERROR: Unknown child workflow
      version = "1"
      input   = ["not", "an", "object"] # ERROR: Incorrect value type
    }
  }

  step "e" {
    exec { command = [["nested"]] } # ERROR: Incorrect value type
  }

  # A list template among strings (a list of mixed types).
  step "f" {
    exec {
      command = ["echo", "{{ input.tags }}"] # ERROR: Incorrect value type
    }
  }
}
