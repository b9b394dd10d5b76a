# A jitter as long as the interval is allowed, with a warning: a slot's run
# may start after the next slot's (semantics.md §18).
workflow "jittery" {
  version = "1.0.0"
  schedule "tick" {
    every  = "1m"
    jitter = "1m" # WARNING: Jitter not shorter than the interval
  }
  schedule "calm" {
    every  = "1m"
    jitter = "59s"
  }
  step "a" {
    set { v = 1 }
  }
}
