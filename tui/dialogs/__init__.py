"""The browser's modal dialogs (curation forms), one per module."""
