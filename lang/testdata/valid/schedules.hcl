workflow "report" {
  version = "1.0.0"
  input "date" { type = string }
  input "label" {
    type    = string
    default = "nightly"
  }

  schedule "nightly" {
    cron         = "0 2 * * *"
    timezone     = "Europe/Berlin"
    inputs       = { date = "{{ schedule.date }}", label = "{{ schedule.name }} at {{ schedule.time }}" }
    overlap      = "queue"
    catch_up     = "all"
    max_catch_up = 24
    jitter       = "30s"
  }

  schedule "hourly" {
    every  = "1h"
    inputs = { date = "{{ schedule.date }}" }
  }

  step "s" {
    exec { command = ["echo", "{{ input.date }}", "{{ input.label }}"] }
  }
}
