test "bad expectations" {
  inputs = { service = "web" }
  mock "build" { output = { stdout = "ok" } }
  signal "aproval" { data = { ok = true } } # ERROR: No step waits for this signal
  signal "approval" { after = "2 hours" } # ERROR: Invalid duration
  signal "go" { data = { by = 5 } } # ERROR: Signal data does not match the wait step
  expect {
    status  = "done" # ERROR: Invalid status
    outputs = {
      uri = "x" # ERROR: Unknown output
    }
    steps = {
      rolout = { status = "completed" } # ERROR: Unknown step
      build  = { status = "finished" } # ERROR: Invalid step expectation
    }
    calls  = {
      charge = 1 # ERROR: Calls of a step that is not mocked
    }
    assert = [
      "steps.build.attempts + 'a' > 1", # ERROR: Type mismatch
      "steps.biuld.status == 'completed'", # ERROR: Unknown step
      "steps.build.attempts >", # ERROR: Invalid expression
    ]
  }
}

test "bad expectations" { # ERROR: Duplicate test
  expect { status = "completed" }
}

test "unknown workflow" {
  workflow = "shop" # ERROR: Unknown workflow
  expect { status = "completed" }
}

test "inputs, each at its own line" {
  inputs = {
    service = 5 # ERROR: Invalid input
    colour  = "red" # ERROR: Unknown input
  }
  expect { status = "completed" }
}

test "no expect" { # ERROR: Missing expect block
  # ERROR: Unknown input
  inputs = { service = 5, colour = "red" } # ERROR: Invalid input
}
