workflow "secrets" {
  version = "1.0.0"
  secret "token" { env = "TOKEN" }
  secret "empty" { env = "" } # ERROR: Invalid environment variable name

  step "a" {
    when = "secrets.token != ''" # ERROR: Variable not visible here
    set {
      leaked = "{{ secrets.token }}" # ERROR: Variable not visible here
    }
  }

  step "b" {
    exec {
      command = ["curl", "-H", "Authorization: {{ secrets.tokn }}"] # ERROR: Unknown secret
    }
  }

  output "leak" {
    value = "{{ secrets.token }}" # ERROR: Variable not visible here
  }
}
