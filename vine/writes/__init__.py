"""The three write calls (plant, graft, tend), init, and the transaction they share."""

# The write journal under ``_derived/`` (see :mod:`monkeyllm.writes.transaction`); named
# here so that opening a forest can look for one without loading the write machinery.
JOURNAL = "journal.json"
