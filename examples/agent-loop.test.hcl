# Tests of agent-loop.hcl: flowrun test examples/ (spec/testing.md). Each
# until iteration is one call of the mock.

test "converges in the second round" {
  mock "refine" {
    results = [
      { output = { json = { draft = "d1", score = 0.5, round = 1 } } },
      { output = { json = { draft = "d2", score = 0.8, round = 2 } } },
    ]
  }
  expect {
    status  = "completed"
    outputs = { converged = true, rounds = 2, draft = "d2" }
    calls   = { refine = 2 }
  }
}

test "never converges" {
  inputs = { target = 2 }
  mock "refine" { output = { json = { draft = "d", score = 1, round = 6 } } }
  expect {
    status  = "completed"
    outputs = { converged = false }
    steps   = { refine = { status = "failed" } }
    calls   = { refine = 6 }
  }
}

# The real program: the score is round/4, so target 0.5 stops at round 2.
test "real refine stops at the target" {
  inputs = { target = 0.5 }
  expect {
    status  = "completed"
    outputs = { converged = true, rounds = 2 }
  }
}
