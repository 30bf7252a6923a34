"""The browser's screens, one per module."""
