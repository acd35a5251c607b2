"""One module per step of the graph. Each node takes the state and the deps, returns an update."""
