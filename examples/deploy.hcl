# deploy: build, test, wait for a human approval, roll out with retries,
# then poll a health check until it passes. Alerts on failure.
#
#   flowrun apply examples/deploy.hcl --input service=web --input release=1.4.0
#   # apply exits 3: the run waits for the "approval" signal. Then:
#   flowrun signal deploy/web@1.4.0 approval --data '{"approved": true, "by": "ana"}'
#   flowrun resume deploy@last

workflow "deploy" {
  version     = "2.0.0" # 2: the approval signal's data has a type
  description = "Build, test, approve, roll out, health-check."

  input "service" { type = string }
  input "release" { type = string }

  key      = "input.service + '@' + input.release" # re-applying resumes, never deploys twice
  deadline = "48h"                                 # approval included

  concurrency { # one deploy per service at a time; later ones queue
    key         = "'deploy-' + input.service"
    limit       = 1
    on_conflict = "queue"
  }

  defaults {
    timeout = "10m"
  }

  step "build" {
    exec { command = ["./bin/build", "{{ input.service }}", "{{ input.release }}"] }
  }

  step "test" {
    depends_on = [step.build]
    exec { command = ["./bin/run-tests", "{{ input.service }}"] }
  }

  # A durable wait: the run is parked (no worker held) until the signal.
  # Its data has a type: a signal with other data is refused when it is
  # sent, and the steps below read its fields checked at compile time.
  step "approve" {
    depends_on = [step.test]
    wait {
      signal  = "approval"
      timeout = "24h"
      type    = object({ approved = bool, by = string })
    }
  }

  step "rejected" {
    when = "!steps.approve.output.approved"
    fail { message = "deploy of {{ input.release }} rejected by {{ steps.approve.output.by }}" }
  }

  # bin/rollout fails its first attempt with exit 75 ("try again").
  step "rollout" {
    when = "steps.approve.output.approved"
    exec { command = ["./bin/rollout", "{{ input.service }}", "{{ steps.build.output.json.artifact }}"] }
    retry {
      attempts = 4
      backoff  = "2s"
      jitter   = "500ms"
      when     = "has(error.exit_code) && error.exit_code == 75"
    }
  }

  # Repeat the check every 2s until the until-condition holds (max 10 times).
  # Each check is its own step key (health#0, health#1, ...), in FLOWRUN_STEP.
  step "health" {
    depends_on     = [step.rollout]
    until          = "steps.health.output.json.healthy"
    interval       = "2s"
    max_iterations = 10
    exec { command = ["./bin/health-check", "{{ input.service }}"] }
  }

  output "artifact" { value = "{{ steps.build.output.json.artifact }}" }
  output "approved_by" { value = "{{ steps.approve.output.by }}" }

  alert "oncall" {
    on = ["failed", "timed_out"]
    exec {
      command  = ["./bin/notify", "{{ run.workflow }} {{ run.key }}: {{ event.kind }}: {{ event.message }}"]
      pass_env = ["ALERT_LOG"] # where bin/notify writes, from the worker's environment
    }
  }
}
