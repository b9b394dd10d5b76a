# nightly-report: collect one number per source, summarise them, write a
# report file; flag values over a threshold; alert when the run fails or
# passes its deadline. Its schedule runs it at 02:00 Berlin time every night
# (a flowrun worker fires it); the key makes it once per date.
#
#   flowrun apply examples/nightly-report.hcl        # activates the schedule
#   flowrun worker                                   # fires it every night
#   flowrun apply examples/nightly-report.hcl --run --input date=2025-01-02
#   flowrun apply examples/nightly-report.hcl --run --input date=2025-01-03 --input fail_source=errors
#     # the "errors" collector fails: the run fails and bin/notify logs an
#     # alert line in /tmp/flowrun-alerts.log (ALERT_LOG=FILE for another)

workflow "nightly-report" {
  version     = "1.1.1"
  description = "Collect, summarise and publish the nightly numbers."
  # A program gets only a few variables of the worker's environment (PATH,
  # HOME, the locale, ...). bin/notify, in "flag" and in the alert, reads
  # where to write from ALERT_LOG: every program of the workflow takes it.
  pass_env = ["ALERT_LOG"]

  input "date" {
    type    = string
    default = "2025-01-01"
  }
  input "sources" {
    type    = list(string)
    default = ["orders", "signups", "errors"]
  }
  input "threshold" {
    type    = number
    default = 100
  }
  input "fail_source" { # a source whose collector should fail (demo)
    type    = string
    default = ""
  }

  key      = "'report-' + input.date" # re-applying a date resumes, never duplicates
  deadline = "1h"

  # Every night at 02:00 in Berlin, for that day's date. A night the
  # workers were all down fires once when one comes back (catch_up =
  # "latest"); the jitter spreads the start over a minute.
  schedule "nightly" {
    cron     = "0 2 * * *"
    timezone = "Europe/Berlin"
    inputs   = { date = "{{ schedule.date }}" }
    catch_up = "latest"
    jitter   = "1m"
  }

  concurrency { # cron overlap: if last night's run is still going, skip
    key         = "'nightly-report'"
    on_conflict = "skip"
  }

  step "collect" {
    foreach {
      items       = "input.sources"
      concurrency = 3
    }
    timeout = "2m"
    retry {
      attempts = 2
      backoff  = "1s"
    }
    exec {
      command = ["./bin/collect-metric", "{{ item }}", "{{ input.date }}"]
      env     = { BREAK = "{{ input.fail_source }}" }
    }
  }

  step "summarise" {
    set {
      sources = "{{ size(steps.collect.output) }}"
      high    = "{{ steps.collect.output.filter(o, o.json.value > input.threshold).map(o, o.json.source) }}"
    }
  }

  # A list inside a text template is written as compact JSON: the script
  # gets [{"date":...,"line":"orders 124",...}, ...] on stdin.
  step "publish" {
    depends_on = [step.summarise]
    exec {
      command  = ["./bin/render-report", "{{ input.date }}"]
      pass_env = ["REPORT_DIR"] # this program only: where the report goes
      stdin    = "{{ steps.collect.output.map(o, o.json) }}\n"
    }
  }

  step "flag" { # runs only when some value is over the threshold
    when = "size(steps.summarise.output.high) > 0"
    exec { command = ["./bin/notify", "{{ input.date }}: over {{ input.threshold }}: {{ steps.summarise.output.high }}"] }
  }

  output "report" { value = "{{ steps.publish.output.json.path }}" }
  output "high" { value = "{{ steps.summarise.output.high }}" }

  alert "ops" {
    on = ["failed", "timed_out"]
    exec { command = ["./bin/notify", "nightly-report {{ input.date }}: {{ event.kind }} at {{ event.step }}: {{ event.message }}"] }
  }
}
