workflow "duplicates" {
  version = "1.0.0"

  input "a" { type = string }
  input "a" { type = number } # ERROR: Duplicate input

  secret "token" { env = "TOKEN" }
  secret "token" { env = "OTHER" } # ERROR: Duplicate secret

  breaker "b" {
    failures = 1
    cooldown = "1s"
  }
  breaker "b" { # ERROR: Duplicate breaker
    failures = 2
    cooldown = "1s"
  }

  concurrency { key = "input.a" }
  concurrency { key = "input.a" } # ERROR: Duplicate concurrency block

  step "s" {
    set { x = 1 }
  }
  step "s" { # ERROR: Duplicate step
    set { x = 2 }
  }

  step "t" {
    retry { attempts = 2 }
    retry { attempts = 3 } # ERROR: Duplicate retry block
    http {
      url  = "http://example.com"
      body = {
        a = 1
        a = 2 # ERROR: Duplicate key
      }
    }
  }

  output "o" { value = 1 }
  output "o" { value = 2 } # ERROR: Duplicate output

  alert "ops" {
    on = ["failed"]
    exec { command = ["true"] }
  }
  alert "ops" { # ERROR: Duplicate alert
    on = ["failed"]
    exec { command = ["true"] }
  }
}
