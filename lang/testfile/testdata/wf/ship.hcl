workflow "ship" {
  version = "1.0.0"

  input "service" { type = string }
  input "count" {
    type    = number
    default = 1
  }

  step "build" {
    exec { command = ["./bin/build", "{{ input.service }}"] }
  }

  step "charge" {
    http {
      method = "POST"
      url    = "http://127.0.0.1:9/charge"
    }
  }

  step "approve" {
    wait { signal = "approval" }
  }

  step "ok" {
    wait {
      signal = "go"
      type   = object({ by = string })
    }
  }

  step "total" {
    set { n = "{{ input.count * 2 }}" }
  }

  step "rollout" {
    depends_on = [step.build, step.approve]
    exec { command = ["./bin/rollout"] }
  }

  output "url" { value = "https://{{ input.service }}" }
}
