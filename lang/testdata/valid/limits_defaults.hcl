workflow "tuned" {
  version     = "4.0.0"
  description = "Every workflow-level setting."
  key         = "input.customer + '/' + string(input.batch)"
  deadline    = "1h30m"

  input "customer" { type = string }
  input "batch" { type = number }

  concurrency {
    key         = "input.customer"
    limit       = 3
    on_conflict = "skip"
  }

  limits {
    attempts     = 5000
    output_bytes = 65536
    parallel     = 2
  }

  defaults {
    timeout = "45s"
    retry {
      attempts = 2
      backoff  = "2s"
      when     = "error.kind != 'exit'"
    }
  }

  step "load" {
    exec { command = ["load", "{{ input.customer }}"] }
  }

  step "transform" {
    retry { attempts = 7 }
    exec { command = ["transform"] }
  }

  step "mark" {
    set { at = "{{ run.started_at }}" }
  }
}
