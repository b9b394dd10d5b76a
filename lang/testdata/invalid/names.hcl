workflow "9lives" { # ERROR: Invalid workflow name
  version = "1.0.0"

  input "in" { type = string } # ERROR: Invalid input name

  step "bad-name" { # ERROR: Invalid step name
    set { x = 1 }
  }

  output "my output" { # ERROR: Invalid output name
    value = 1
  }

  step "w" {
    wait { signal = "has space" } # ERROR: Invalid signal name
  }
}
