workflow "types" {
  version = "1.0.0"

  input "s" { type = string }
  input "n" {
    type    = number
    default = 1.5
  }
  input "b" {
    type    = bool
    default = true
  }
  input "l" {
    type    = list(string)
    default = ["a", "b"]
  }
  input "m" {
    type    = map(number)
    default = { a = 1, b = 2 }
  }
  input "set" {
    type    = set(string)
    default = ["x"]
  }
  input "o" {
    type    = object({ name = string, tags = list(string), nested = object({ ok = bool }) })
    default = { name = "n", tags = [], nested = { ok = false } }
  }
  input "anything" {
    type    = any
    default = null
  }
  input "described" {
    type        = any
    description = "anything at all"
  }

  step "use" {
    set {
      upper = "{{ input.s.upperAscii() }}"
      sum   = "{{ input.n + input.m['a'] }}"
      first = "{{ input.l[0] }}"
      name  = "{{ input.o.name }}"
      ok    = "{{ input.o.nested.ok && input.b }}"
      text  = "n = {{ input.n }}"
      lit   = { a = [1, 2], b = "c" }
    }
  }

  output "upper" { value = "{{ steps.use.output.upper }}" }
  output "sum" { value = "{{ steps.use.output.sum }}" }
  output "static" { value = [1, 2, 3] }
}
