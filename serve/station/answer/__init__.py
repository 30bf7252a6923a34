"""``answer`` on the Station: the scoped sweep or walk, and the model bound to a forest."""
