test "upgrade that does not parse" {
  inputs = { service = "web" }
  upgrade {
    file   = "up/broken.hcl" # ERROR: Invalid upgrade file
    after  = "1h"
    choose = "migrate"
  }
  expect { status = "completed" }
}

test "upgrade beside the workflows" {
  inputs = { service = "web" }
  upgrade {
    file   = "ship.hcl" # ERROR: Upgrade file beside the workflows
    choose = "sideways" # ERROR: Invalid choose
  }
  expect { status = "completed" }
}
