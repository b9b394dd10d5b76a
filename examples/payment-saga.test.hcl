# Tests of payment-saga.hcl: flowrun test examples/ (spec/testing.md).

test "charged and shipped" {
  mock "reserve" { output = { json = { reservation = "R-1" } } }
  mock "charge" {
    results = [
      { error = { kind = "exec", exit_code = 75, message = "gateway busy" } },
      { output = { json = { charge_id = "CH-1" } } },
    ]
  }
  mock "ship" { output = { json = { tracking = "TR-1" } } }
  expect {
    status      = "completed"
    outputs     = { charge_id = "CH-1", tracking = "TR-1" }
    steps       = { charge = { status = "completed", attempts = 2 } }
    calls       = { charge = 2, ship = 1 }
    compensated = []
  }
}

test "declined card releases the stock" {
  inputs = { card = "declined" }
  mock "reserve" { output = { json = { reservation = "R-2" } } }
  mock "charge" { error = { kind = "exec", exit_code = 2, message = "card declined" } }
  mock "reserve~compensate" { output = { stdout = "released" } }
  expect {
    status      = "failed"
    compensated = [step.reserve]
    steps = {
      charge = { status = "failed", attempts = 1 } # exit 2 is not retried
      ship   = { status = "canceled" }
    }
    calls  = { "reserve~compensate" = 1, charge = 1 }
    assert = ["steps.charge.error.exit_code == 2"]
  }
}

test "failed shipment is refunded, then the stock released" {
  mock "reserve" { output = { json = { reservation = "R-3" } } }
  mock "charge" { output = { json = { charge_id = "CH-3" } } }
  mock "ship" { error = { kind = "exec", exit_code = 1, message = "discontinued" } }
  mock "charge~compensate" {
    results = [
      { error = { kind = "exec", exit_code = 1, message = "gateway down" } },
      { output = { stdout = "refunded" } },
    ]
  }
  mock "reserve~compensate" { output = { stdout = "released" } }
  expect {
    status      = "failed"
    compensated = [step.charge, step.reserve]
    steps       = { "charge~compensate" = { status = "completed", attempts = 2 } }
    calls       = { "charge~compensate" = 2, "reserve~compensate" = 1 }
  }
}
