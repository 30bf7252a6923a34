"""The seven read calls, one module each."""
