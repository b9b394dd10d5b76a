# Tests of deploy.hcl: flowrun test examples/ (spec/testing.md).

test "approval granted deploys" {
  inputs = { service = "web", release = "1.4.0" }

  mock "build" { output = { stdout = "{\"artifact\":\"web-1.4.0.tar\"}", json = { artifact = "web-1.4.0.tar" } } }
  mock "rollout" { # one result per attempt; the last repeats
    results = [
      { error = { kind = "exec", exit_code = 75, message = "busy" } },
      { output = { stdout = "rolled" } },
    ]
  }
  mock "health" {
    results = [
      { output = { json = { healthy = false } } },
      { output = { json = { healthy = true } } },
    ]
  }
  signal "approval" {
    after = "2h"
    data  = { approved = true, by = "ana" }
  }

  expect {
    status  = "completed"
    outputs = { artifact = "web-1.4.0.tar", approved_by = "ana" }
    steps = {
      rollout  = { status = "completed", attempts = 2 }
      rejected = { status = "skipped" }
    }
    calls  = { rollout = 2, build = 1 }
    assert = ["steps.health.output.json.healthy", "steps.test.status == 'completed'"]
  }
}

test "rejection fails the run" {
  inputs = { service = "web", release = "1.4.1" }
  mock "build" { output = { json = { artifact = "web-1.4.1.tar" } } }
  mock "test" { output = { stdout = "ok" } }
  mock "approve" { output = { approved = false, by = "bo" } }
  expect {
    status = "failed"
    steps  = { rejected = { status = "failed" }, build = { status = "completed", attempts = 1 } }
    calls  = { approve = 1, build = 1 }
    assert = ["steps.rejected.error.message.contains('rejected by bo')"]
  }
}
