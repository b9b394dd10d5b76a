workflow "loops" {
  version = "1.0.0"

  input "hosts" { type = list(string) }

  step "ping" {
    on_error = "continue"
    foreach {
      items       = "input.hosts"
      concurrency = 4
      on_failure  = "continue"
    }
    exec { command = ["ping", "-c", "1", "{{ item }}"] }
    idempotency_key = "ping-{{ index }}-{{ item }}"
  }

  step "summary" {
    set {
      reached = "{{ steps.ping.output.filter(o, o.exit_code == 0).size() }}"
      total   = "{{ size(input.hosts) }}"
    }
  }

  step "wait_ready" {
    until          = "steps.wait_ready.output.status == 200 || steps.summary.output.reached == 0.0"
    interval       = "5s"
    max_iterations = 12
    http { url = "http://127.0.0.1:8080/ready" }
  }

  step "countdown" {
    until = "steps.countdown.output.left <= 0.0"
    set {
      left = "{{ steps.summary.output.total - 1.0 }}"
    }
  }

  output "reached" { value = "{{ steps.summary.output.reached }}" }
}
