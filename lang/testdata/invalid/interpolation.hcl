workflow "interpolation" {
  version     = "1.0.0"
  description = "made by ${user}" # ERROR: Unsupported interpolation
  input "x" { type = string }

  step "a" {
    when = "${input.x}" # ERROR: Unsupported interpolation
    set {
      v = "order ${input.x}" # ERROR: Unsupported interpolation
      w = "%{ if true }yes%{ endif }" # ERROR: Unsupported interpolation
    }
  }
}
