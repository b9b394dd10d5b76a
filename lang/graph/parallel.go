package graph

// ParallelStepDecode is the number of steps from which the work on a
// graph's steps is spread over the available processors: decoding and
// sealing here, decoding and checking the step blocks in the front end.
// Tests lower it to run the parallel paths on small graphs.
var ParallelStepDecode = 64
