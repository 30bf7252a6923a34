"""``vine browse``: a Textual app to browse and curate a forest.

``monkeyllm.tui.app.BrowseApp`` is the app; importing this package alone loads nothing
(the CLI imports the app, and with it Textual, only when ``vine browse`` runs).
"""
