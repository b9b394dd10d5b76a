workflow "schedules" {
  version = "1.0.0"
  input "date" { type = string }
  input "n" {
    type    = number
    default = 1
  }

  step "s" {
    set { x = "{{ input.date }}" }
  }

  schedule "fields" {
    cron   = "0 2 * *" # ERROR: Invalid cron expression
    inputs = { date = "x" }
  }

  schedule "range" {
    cron   = "0 25 * * *" # ERROR: Invalid cron expression
    inputs = { date = "x" }
  }

  schedule "zone" {
    every    = "1h"
    timezone = "Europe/Berlinn" # ERROR: Unknown time zone
    inputs   = { date = "x" }
  }

  # A bad time zone does not hide a bad cron expression: both are reported.
  schedule "zone_and_cron" {
    cron     = "0 2 * *" # ERROR: Invalid cron expression
    timezone = "Mars/Olympus" # ERROR: Unknown time zone
    inputs   = { date = "x" }
  }

  schedule "short" {
    every  = "500ms" # ERROR: Invalid every interval
    inputs = { date = "x" }
  }

  schedule "both" {
    cron   = "@daily"
    every  = "1h" # ERROR: Conflicting schedule timing
    inputs = { date = "x" }
  }

  schedule "neither" { # ERROR: Missing schedule timing
    inputs = { date = "x" }
  }

  schedule "max" {
    every        = "1h"
    max_catch_up = 3 # ERROR: Invalid max_catch_up
    inputs       = { date = "x" }
  }

  schedule "overlap" {
    every   = "1h"
    overlap = "sometimes" # ERROR: Invalid overlap
    inputs  = { date = "x" }
  }

  schedule "unknown-input" {
    every  = "1h"
    inputs = { date = "x", dat = "y" } # ERROR: Unknown schedule input
  }

  schedule "wrong-type" {
    every  = "1h"
    inputs = { date = "{{ schedule.date }}", n = "{{ schedule.name }}" } # ERROR: Incorrect schedule input type
  }

  schedule "missing" {
    every  = "1h"
    inputs = { n = 2 } # ERROR: Missing schedule input
  }

  schedule "no-inputs" { # ERROR: Missing schedule input
    every = "1h"
  }

  schedule "scope" {
    every  = "1h"
    inputs = { date = "{{ input.date }}" } # ERROR: Variable not visible here
  }

  schedule "unknown-var" {
    every  = "1h"
    inputs = { date = "{{ schedule.day }}" } # ERROR: Unknown field
  }
}
