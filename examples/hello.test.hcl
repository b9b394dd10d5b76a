# Tests of hello.hcl: flowrun test examples/ (spec/testing.md).

# Nothing mocked: the exec step runs echo for real.
test "greets the default" {
  expect {
    status  = "completed"
    outputs = { said = "Hello, world!" }
    steps   = { greeting = { output = { text = "Hello, world!" } } }
  }
}

test "greets by name, program mocked" {
  inputs = { name = "Ada" }
  mock "say" { output = { stdout = "Hello, Ada!\n" } }
  expect {
    status  = "completed"
    outputs = { said = "Hello, Ada!" }
    calls   = { say = 1 }
    assert  = ["steps.greeting.output.text == 'Hello, ' + input.name + '!'"]
  }
}
