"""The browser's widgets, one per module."""
