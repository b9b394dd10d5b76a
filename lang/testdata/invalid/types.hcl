workflow "types" {
  version = "1.0.0"

  step "s" {
    set { x = 1 }
  }

  input "a" { type = strin } # ERROR: Invalid type specification
  input "b" { type = tuple([string]) } # ERROR: Unsupported type
  input "c" {
    type    = number
    default = "five" # ERROR: Invalid default
  }
  input "d" {
    type    = string
    default = null # ERROR: Invalid default
  }
  input "e" {
    type    = object({ name = string })
    default = { name = "x", extra = 1 } # ERROR: Invalid default
  }
  input "f" {
    type    = list(number)
    default = [1, "two"] # ERROR: Invalid default
  }
  input "g" { type = object({ n = optional(string) }) } # ERROR: Unsupported type
}
