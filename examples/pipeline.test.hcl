# Tests of pipeline.hcl: flowrun test examples/ (spec/testing.md). The
# items run four at a time, so a mock gives every item the same result.

test "every batch processed" {
  inputs = { batches = 3 }
  mock "list" { output = { json = ["batch-01", "batch-02", "batch-03"] } }
  mock "process" { output = { json = { batch = "batch-0x", rows = 10 } } }
  mock "total" { output = { json = { total = 30 } } }
  expect {
    status  = "completed"
    outputs = { dead_lettered = 0, total_rows = 30 }
    calls   = { process = 3 }
    assert  = ["size(steps.aggregate.output.processed) == 3"]
  }
}

test "bad data is dead-lettered, not retried" {
  inputs = { batches = 2 }
  mock "list" { output = { json = ["batch-01", "batch-02"] } }
  mock "process" { error = { kind = "exec", exit_code = 3, message = "bad data" } }
  mock "total" { output = { json = { total = 0 } } }
  expect {
    status  = "completed"
    outputs = { processed = [], dead_lettered = 2 }
    calls   = { process = 2 } # exit 3 is not retried (retry.when)
  }
}

test "a flaky batch is retried after its backoff" {
  inputs = { batches = 1 }
  mock "list" { output = { json = ["batch-01"] } }
  mock "process" {
    results = [
      { error = { kind = "exec", exit_code = 1, message = "flaky" } },
      { output = { json = { batch = "batch-01", rows = 7 } } },
    ]
  }
  mock "total" { output = { json = { total = 7 } } }
  expect {
    status  = "completed"
    outputs = { processed = ["batch-01"], total_rows = 7 }
    calls   = { process = 2 }
  }
}
