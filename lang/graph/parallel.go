package graph

// parallelStepDecode is the number of steps from which decodeStepBlocks
// spreads the work over the available processors.
var ParallelStepDecode = 64
