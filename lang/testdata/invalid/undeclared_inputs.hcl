workflow "inputs" {
  version = "1.0.0"
  input "order_id" { type = string }

  step "a" {
    when = "input.ordr_id != ''" # ERROR: Unknown input
    exec {
      command = ["ship", "{{ input.order }}"] # ERROR: Unknown input
    }
  }

  output "o" {
    value = "{{ input.amount }}" # ERROR: Unknown input
  }
}
